"""Find in the whole model (GET /api/models/<id>/search, app/views/search.py): every graph at any
depth, ranking, attribute values in the node panel's text, tensors, bounds and errors."""

from __future__ import annotations

import json
import shutil
import struct
import subprocess
from pathlib import Path

import numpy as np
import onnx
import pytest
from browser.scale_models import bert_like
from onnx import TensorProto, helper, numpy_helper
from protowalk import graph_paths
from testkit import nested_search_model, node_testcases, upload

from app.onnx_io.traverse import walk_graphs
from app.views.search import SearchIndex
from app.views.value_text import format_float32, format_number, js_number

REPO = Path(__file__).resolve().parents[1]
INNER_CONV = "n4/then_branch/n0/body/n0"
BODY = "n4/then_branch/n0/body"


@pytest.fixture
def nested(client):
    r = upload(client, nested_search_model().SerializeToString(), "nested.onnx")
    assert r.status_code == 201
    return r.get_json()["id"]


def find(client, mid, q, **params):
    r = client.get(f"/api/models/{mid}/search", query_string={"q": q, **params})
    assert r.status_code == 200, r.get_json()
    return r.get_json()


def ids(answer) -> list[str]:
    return [r.get("node") or f"{r['kind']}:{r['path']}:{r['name']}" for r in answer["results"]]


def test_a_conv_two_subgraphs_down_is_found_from_the_main_graph(client, nested):
    answer = find(client, nested, "Conv", near="")
    top = answer["results"][0]
    assert top["kind"] == "node" and top["node"] == INNER_CONV and top["path"] == BODY
    assert top["op_type"] == "Conv" and top["name"] == "inner_conv" and top["why"] == "op type"
    assert [c["label"] for c in top["breadcrumb"]] == ["main_graph", "If If_0 · then_branch", "Loop Loop_3 · body"]
    assert [c["path"] for c in top["breadcrumb"]] == ["", "n4/then_branch", BODY]
    # the breadcrumb is the one the page shows once that graph is open, and the node is there
    graph = client.get(f"/api/models/{nested}/graph", query_string={"path": top["path"]}).get_json()
    assert graph["breadcrumb"] == top["breadcrumb"]
    assert next(n for n in graph["nodes"] if n["id"] == top["node"])["op_type"] == "Conv"
    assert answer["query"] == "Conv" and answer["revision"] == 0 and not answer["truncated"]


def test_ranking_op_type_before_names_before_tensors_before_attributes(client, nested):
    answer = find(client, nested, "conv")
    nodes = [(r["node"], r["why"]) for r in answer["results"] if r["kind"] == "node"]
    # exact op type, op type prefix (ConvTranspose), then a name holding "conv"
    assert nodes == [(INNER_CONV, "op type"), ("n2", "op type"), ("n3", "name")]
    scores = [r["score"] for r in answer["results"]]
    assert scores == sorted(scores, reverse=True)
    kinds = [r["kind"] for r in answer["results"]]
    assert kinds.index("tensor") > kinds.index("node") and kinds[-1] == "tensor"
    assert {r["name"] for r in answer["results"] if r["kind"] == "tensor"} == {
        "conv_weight",
        "conv_out",
        "deconv_weight",
        "deconv_out",
    }
    # a node name equal to the query ranks below an op type prefix, above a name substring
    exact = find(client, nested, "leaky")
    assert [(r["node"], r["why"]) for r in exact["results"][:1]] == [("n6", "op type")]  # LeakyRelu prefix
    assert find(client, nested, "my_conv_name")["results"][0]["score"] == 80
    assert find(client, nested, "my_conv")["results"][0]["score"] == 70


def test_the_graph_on_screen_comes_first_at_equal_rank(client, nested):
    default = [r["node"] for r in find(client, nested, "Identity")["results"]]
    assert default == ["n4/else_branch/n0", f"{BODY}/n2"]  # model order (helper sorts attributes by name)
    near = [r["node"] for r in find(client, nested, "Identity", near=BODY)["results"]]
    assert near == [f"{BODY}/n2", "n4/else_branch/n0"]


def test_attribute_values_in_the_node_panels_text(client, nested):
    perm = find(client, nested, "[0, 2, 1, 3]")["results"]
    assert [(r["node"], r["why"]) for r in perm] == [("n0", "attribute perm = [0, 2, 1, 3]")]
    assert ids(find(client, nested, "[0,2,1,3]")) == ["n0"]  # spaces don't matter
    assert ids(find(client, nested, "perm=[0,2,1,3]")) == ["n0"]  # name=value
    assert ids(find(client, nested, "perm")) == ["n0"]  # an attribute's name
    cast = find(client, nested, "INT64")["results"]
    assert [(r["node"], r["why"]) for r in cast if r["kind"] == "node"] == [("n1", "attribute to = 7 (INT64)")]
    assert {r["why"].rpartition(" · ")[2] for r in cast if r["kind"] == "tensor"} == {"INT64"}  # tensors of it
    assert ids(find(client, nested, "to=7")) == ["n1"]
    leaky = find(client, nested, "0.1")["results"]  # float32 0.1 is 0.10000000149011612
    assert [(r["node"], r["why"]) for r in leaky] == [("n6", "attribute alpha = 0.1")]
    kernel = find(client, nested, "attr:kernel")  # attr: also matches parts of attribute names
    assert ids(kernel) == ["n2", INNER_CONV] and {r["why"] for r in kernel["results"]} == {
        "attribute kernel_shape = [1, 1]"
    }
    assert find(client, nested, "kernel")["total"] == 0  # without attr:, names must match whole


def test_tensors_and_functions(client, nested):
    t = find(client, nested, "deconv_weight")["results"][0]
    assert (t["kind"], t["path"], t["role"], t["score"]) == ("tensor", "", "initializer", 50)
    inner = find(client, nested, "tensor:acc")["results"]
    assert {(r["path"], r["name"], r["role"]) for r in inner} == {
        (BODY, "acc_in", "input"),
        (BODY, "acc_out", "output"),
    }
    assert [r["kind"] for r in find(client, nested, "tensor:x")["results"]][:1] == ["tensor"]
    swish = find(client, nested, "swish")["results"]
    assert [(r["kind"], r.get("node"), r["path"]) for r in swish[:2]] == [
        ("node", "n5", ""),
        ("function", None, "fn[0]"),
    ]
    sig = find(client, nested, "op:Sigmoid")["results"]
    assert [(r["node"], [c["label"] for c in r["breadcrumb"]]) for r in sig] == [
        ("fn[0]/n0", ["main_graph", "function local:Swish"])
    ]
    assert find(client, nested, "tensor:S")["results"][0]["path"] == "fn[0]"
    body = find(client, nested, "loop_body")["results"][0]
    assert (body["kind"], body["path"], body["why"]) == ("graph", BODY, "graph name")


def test_results_are_bounded(client, nested):
    two = find(client, nested, "conv", limit=2)
    assert len(two["results"]) == 2 and two["total"] == 7 and two["truncated"]
    relus = [helper.make_node("Relu", [f"t{i}"], [f"t{i + 1}"], name=f"r{i}") for i in range(300)]
    g = helper.make_graph(
        relus,
        "chain",
        [helper.make_tensor_value_info("t0", TensorProto.FLOAT, [1])],
        [helper.make_tensor_value_info("t300", TensorProto.FLOAT, [1])],
    )
    mid = upload(client, helper.make_model(g).SerializeToString()).get_json()["id"]
    many = find(client, mid, "Relu")
    assert len(many["results"]) == 200 and many["total"] == 300 and many["truncated"]
    assert [r["node"] for r in many["results"][:3]] == ["n0", "n1", "n2"]
    assert len(find(client, mid, "relu", limit=1000)["results"]) == 300


@pytest.mark.parametrize(
    ("query", "code"),
    [
        ({}, "missing_query"),
        ({"q": ""}, "missing_query"),
        ({"q": "   "}, "missing_query"),
        ({"q": "op:"}, "missing_query"),
        ({"q": "x" * 201}, "query_too_long"),
        ({"q": "Conv", "limit": "0"}, "bad_limit"),
        ({"q": "Conv", "limit": "lots"}, "bad_limit"),
        ({"q": "Conv", "limit": "5000"}, "bad_limit"),
        ({"q": "Conv", "revision": "x"}, "bad_revision"),
    ],
)
def test_bad_queries_are_refused_in_plain_words(client, nested, query, code):
    r = client.get(f"/api/models/{nested}/search", query_string=query)
    assert r.status_code == 400
    err = r.get_json()["error"]
    assert err["code"] == code and err["message"]


def test_unknown_model_and_revision(client, nested):
    r = client.get("/api/models/nope/search?q=Conv")
    assert r.status_code == 404 and r.get_json()["error"]["code"]
    assert client.get(f"/api/models/{nested}/search?q=Conv&revision=9").status_code == 404


def test_each_revision_is_searched_as_it_was(client, nested):
    r = client.post(
        f"/api/models/{nested}/edits",
        json={"base": 0, "ops": [{"op": "rename_node", "node": INNER_CONV, "name": "zz"}]},
    )
    assert r.status_code == 200, r.get_json()
    assert ids(find(client, nested, "name:zz")) == [INNER_CONV]
    assert find(client, nested, "name:zz", revision=0)["total"] == 0
    assert ids(find(client, nested, "inner_conv", revision=0)) == [INNER_CONV]


def test_openapi_documents_search(client):
    doc = client.get("/api/openapi.json").get_json()
    op = doc["paths"]["/api/models/{id}/search"]["get"]
    assert {p["name"] for p in op["parameters"]} == {"id", "q", "limit", "near", "revision"}
    assert "SearchResults" in doc["components"]["schemas"]


# ------------------------------------------------------------------ the walk


def test_walk_graphs_yields_every_graph_with_the_pages_breadcrumb():
    from app.onnx_io.address import resolve_graph

    model = nested_search_model()
    refs = list(walk_graphs(model))
    assert sorted(r.path for r in refs) == sorted(p for p, _ in graph_paths(model))
    for ref in refs:
        assert ref.crumbs == resolve_graph(model, ref.path).crumbs


def _with_subgraphs(model: onnx.ModelProto) -> bool:
    return bool(model.functions) or any(
        a.type in (onnx.AttributeProto.GRAPH, onnx.AttributeProto.GRAPHS) for n in model.graph.node for a in n.attribute
    )


@pytest.mark.corpus
def test_every_node_of_every_graph_of_the_official_node_tests_is_found_by_its_op_type():
    """Over the ~1,900 official node-test models (49 with subgraphs: Loop, If, Scan, SequenceMap,
    ..., the *_expanded ones nested several levels deep): each node of each graph at any depth is
    among its op type's results. (Indexing them also renders every attribute of the corpus.)"""
    cases = [c for c in node_testcases().values() if c.model is not None]
    assert sum(_with_subgraphs(c.model) for c in cases) >= 40
    nested = 0
    for case in cases:
        model = case.model
        index = SearchIndex(model)
        assert sorted(g.path for g in index.graphs) == sorted(p for p, _ in graph_paths(model)), case.name
        by_op: dict[str, set[str]] = {}
        for path, g in graph_paths(model):
            for i, n in enumerate(g.node):
                by_op.setdefault(n.op_type, set()).add(f"{path}/n{i}" if path else f"n{i}")
                nested += "/" in path
        for op, want in by_op.items():
            answer = index.search(op, 1000)
            got = {r["node"] for r in answer["results"] if r["kind"] == "node" and r["op_type"] == op}
            assert got == want, (case.name, op)
            assert all(r["score"] == 100 for r in answer["results"] if r.get("node") in want)
    assert nested > 50


@pytest.mark.corpus
@pytest.mark.parametrize(
    "name", ["test_loop16_seq_none", "test_if_seq", "test_scan9_sum", "test_sequence_map_add_2_sequences"]
)
def test_official_models_through_the_api(client, name):
    model = node_testcases()[name].model
    mid = upload(client, model.SerializeToString(), f"{name}.onnx").get_json()["id"]
    for path, g in graph_paths(model):
        for i, n in enumerate(g.node):
            nid = f"{path}/n{i}" if path else f"n{i}"
            answer = find(client, mid, f"op:{n.op_type}", limit=1000)
            hit = next(r for r in answer["results"] if r.get("node") == nid)
            assert hit["path"] == path and hit["breadcrumb"][-1]["path"] == path


# ------------------------------------------------------------------ the page's text, in Python


def test_python_formats_numbers_as_the_pages_lib_format_js():
    """format_float32 / format_number / js_number against lib/format.js run by node, on random
    float32 bit patterns, decimals, ties and integers past 2^53."""
    node = shutil.which("node")
    if node is None:
        pytest.skip("node is not installed")
    rng = np.random.default_rng(7)
    bits = rng.integers(0, 2**32, 4000, dtype=np.uint64)
    f32 = [float(struct.unpack("<f", struct.pack("<I", int(b)))[0]) for b in bits]
    f32 = [v for v in f32 if np.isfinite(v)]
    f32 += [
        float(np.float32(v))
        for v in (0.1, 1e-5, 19781.0625, -2854276.25, 3.4028235e38, 1e-45, 2.5, 0.009999999776482582)
    ]
    doubles = [float(v) for v in rng.uniform(-1e7, 1e7, 1000)] + [
        float(10.0 ** rng.integers(-30, 30)) * rng.random() for _ in range(1000)
    ]
    doubles += [9999999.9, 0.000099999, 1e21, 2.0**60, 1234567.5, -1.234e-05, 0.5, 100.0, 1e-7]
    script = (
        f'import {{ formatFloat32, formatNumber }} from "{(REPO / "app/static/js/lib/format.js").as_uri()}";\n'
        'let s = ""; process.stdin.on("data", (c) => { s += c; });\n'
        'process.stdin.on("end", () => { const { f, d } = JSON.parse(s);\n'
        "  console.log(JSON.stringify([f.map(formatFloat32), d.map(formatNumber), d.map(String)])); });\n"
    )
    out = subprocess.run(
        [node, "--input-type=module", "-e", script],
        input=json.dumps({"f": f32, "d": doubles}),
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    js_f32, js_num, js_str = json.loads(out)
    assert [format_float32(v) for v in f32] == js_f32
    assert [format_number(v) for v in doubles] == js_num
    assert [js_number(v) for v in doubles] == js_str


def test_training_graphs_are_searched_too(client):
    model = nested_search_model()
    info = model.training_info.add()
    info.algorithm.CopyFrom(
        helper.make_graph(
            [
                helper.make_node(
                    "Adagrad", ["R", "T", "X", "G", "H"], ["X2", "H2"], name="step", domain="ai.onnx.preview.training"
                )
            ],
            "training_step",
            [],
            [],
        )
    )
    mid = upload(client, model.SerializeToString(), "train.onnx").get_json()["id"]
    hit = find(client, mid, "adagrad")["results"][0]
    assert (hit["node"], hit["path"]) == ("train[0].algo/n0", "train[0].algo")
    assert [c["label"] for c in hit["breadcrumb"]] == ["main_graph", "training 0 algorithm"]
    assert find(client, mid, "ai.onnx.preview.training.Adagrad")["results"][0]["score"] == 100


def test_several_words_find_what_every_word_finds(client):
    """A person narrows a find as they would in any search box: "layer.1 MatMul" lists that
    layer's matrix products, not every MatMul and every layer.1 node."""
    model = bert_like(2)
    mid = upload(client, model.SerializeToString(), "bert.onnx").get_json()["id"]
    want = [n.name for n in model.graph.node if "layer.1/" in n.name and n.op_type == "MatMul"]
    answer = find(client, mid, "layer.1/ MatMul")
    nodes = [r for r in answer["results"] if r["kind"] == "node"]
    assert [r["name"] for r in nodes] == want and len(want) == 8
    assert {r["why"] for r in nodes} == {"name + op type"} and {r["score"] for r in nodes} == {60}
    # each word keeps its own field; tensors must hold every word in their name
    narrowed = find(client, mid, "op:MatMul layer.1/attention")["results"]
    assert [r["name"] for r in narrowed] == [w for w in want if "/attention/" in w]
    tensors = find(client, mid, "tensor:layer.1 tensor:MatMul")["results"]
    assert tensors and all("layer.1" in r["name"] and "MatMul" in r["name"] for r in tensors)
    assert {r["kind"] for r in tensors} == {"tensor"}
    # words that meet nowhere find nothing, though each alone finds much
    assert find(client, mid, "layer.1/ Conv")["total"] == 0 < find(client, mid, "layer.1/")["total"]


def test_python_writes_types_as_the_pages_lib_format_js():
    """format_type (Compare's input and output changes) against formatType run by node, on the
    types of every input and output of the official node tests (tensors of every dtype, unknown
    and symbolic dims, sequences, maps, optionals, sparse tensors)."""
    node = shutil.which("node")
    if node is None:
        pytest.skip("node is not installed")
    from app.views.value_text import format_type
    from app.views.values import type_json

    types = {}
    for case in node_testcases().values():
        for v in [*case.model.graph.input, *case.model.graph.output]:
            t = type_json(v.type)
            types[json.dumps(t, sort_keys=True)] = t
    types['{"kind": "unknown"}'] = {"kind": "unknown"}
    # dims written as expressions of others (optimum's decoder mask), bracketed among others
    for shape in (["batch", "past_sequence + sequence"], ["2*s0"], ["batch-size", "s0 / 2", None]):
        types[repr(shape)] = {"kind": "tensor", "dtype": "INT64", "shape": shape}
    listed = list(types.values())
    assert len(listed) > 200
    script = (
        f'import {{ formatType }} from "{(REPO / "app/static/js/lib/format.js").as_uri()}";\n'
        'let s = ""; process.stdin.on("data", (c) => { s += c; });\n'
        'process.stdin.on("end", () => { console.log(JSON.stringify(JSON.parse(s).map(formatType))); });\n'
    )
    out = subprocess.run(
        [node, "--input-type=module", "-e", script],
        input=json.dumps(listed),
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    assert [format_type(t) for t in listed] == json.loads(out)
    assert format_type(types[repr(["batch", "past_sequence + sequence"])]) == "INT64 ⟨batch×(past_sequence + sequence)⟩"
    assert format_type(types[repr(["2*s0"])]) == "INT64 ⟨2*s0⟩"  # alone: nothing to tell apart


def test_a_small_initializers_values_are_found_on_the_nodes_reading_it(client):
    """A detector's thresholds are initializers, not Constant nodes (the KV-cache QA's YOLO):
    Find "0.45" finds the node reading iou_threshold, as it finds a Constant's value."""
    from onnx import TensorProto, helper, numpy_helper

    consts = [
        numpy_helper.from_array(np.array(0.45, np.float32), "iou_threshold"),
        numpy_helper.from_array(np.array([1, -1], np.int64), "flat"),
        numpy_helper.from_array(np.ones((4, 4), np.float32), "big"),  # 16 values: not listed
    ]
    graph = helper.make_graph(
        [
            helper.make_node("Mul", ["x", "iou_threshold"], ["m"], name="scale"),
            helper.make_node("MatMul", ["m", "big"], ["b"], name="mm"),
            helper.make_node("Reshape", ["b", "flat"], ["y"], name="flatten"),
        ],
        "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 4])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 4])],
        consts,
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    mid = upload(client, model.SerializeToString(), "thresholds.onnx").get_json()["id"]
    found = find(client, mid, "0.45")["results"]
    assert [(r["node"], r["why"]) for r in found] == [("n0", "reads iou_threshold = 0.45")], found
    found = find(client, mid, "[1,-1]")["results"]
    assert [(r["node"], r["why"]) for r in found] == [("n2", "reads flat = [1, -1]")], found
    assert find(client, mid, "1,1,1,1")["total"] == 0  # the big one (16 values) is not listed


def test_an_unnamed_node_is_found_by_the_weight_it_reads():
    """QA28: in light_resnet50 (a Caffe2 export: nodes unnamed, blocks named by their weights)
    "res3_0_branch2a Conv" found nothing — the only way to the Conv was through its weight's panel.
    A node is found by a weight it reads, below the weight itself; not by other tensors."""
    path = Path(onnx.__file__).parent / "backend/test/data/light/light_resnet50.onnx"
    model = onnx.load(path)
    index = SearchIndex(model)
    found = index.search("res3_0_branch2a Conv")["results"]
    convs = [
        k for k, n in enumerate(model.graph.node) if n.op_type == "Conv" and "gpu_0/res3_0_branch2a_w_0" in n.input
    ]
    assert [r["node"] for r in found if r["kind"] == "node"] == [f"n{k}" for k in convs] and convs
    assert found[0]["why"] == "reads gpu_0/res3_0_branch2a_w_0 + op type"
    alone = index.search("res3_0_branch2a_w_0")["results"]
    kinds = [r["kind"] for r in alone]
    assert kinds[0] == "tensor" and "node" in kinds  # the weight (and its shape's), then its reader
    assert next(r for r in alone if r["kind"] == "node")["node"] == f"n{convs[0]}"


def torch_noted_model() -> onnx.ModelProto:
    """Two MatMuls as dynamo writes them (module, class and stack trace in metadata), one with a
    doc string; one weight float16 (widened by a Cast), the other float32."""
    trace = 'File "/opt/conda/lib/python3.11/site-packages/transformers/models/llama/modeling_llama.py", line {}, in forward'
    nodes = [
        helper.make_node("Cast", ["w16"], ["w16_f32"], name="node__to_copy", to=TensorProto.FLOAT),
        helper.make_node(
            "MatMul", ["x", "w16_f32"], ["h"], name="node_linear", doc_string="apply_rotary (rotate_half)"
        ),
        helper.make_node("MatMul", ["h", "w32"], ["y"], name="node_linear_1"),
    ]
    for n, line, cls in ((nodes[1], 260, "LlamaAttention"), (nodes[2], 191, "LlamaMLP")):
        n.metadata_props.add(key="pkg.torch.onnx.name_scopes", value="['', 'model', 'model.layers.0', 'linear']")
        n.metadata_props.add(key="namespace", value=f": M/model: Model/model.layers.0: {cls}/linear: aten.linear")
        n.metadata_props.add(key="pkg.torch.onnx.stack_trace", value=trace.format(line) + "\n    return self.proj(x)")
    graph = helper.make_graph(
        nodes,
        "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 4])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 4])],
        [
            numpy_helper.from_array(np.eye(4, dtype=np.float16), "w16"),
            numpy_helper.from_array(np.eye(4, dtype=np.float32), "w32"),
        ],
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


def test_nodes_are_found_by_their_stack_trace_class_and_doc_string_tensors_by_type():
    """QA29 #8: a PyTorch source line, a module's class and a doc string find the nodes they
    are written on (ranked below everything else, the line quoted); "float16" the weights of
    that type, which every tensor result names."""
    index = SearchIndex(torch_noted_model())

    def found(q):
        return [(r.get("node") or r["name"], r["why"]) for r in index.search(q)["results"]]

    # (the word "line" is in the node's name too: both reasons said)
    assert found("modeling_llama.py line 260") == [
        ("n1", 'stack trace: …modeling_llama.py", line 260, in forward + name')
    ]
    assert found("LlamaMLP") == [("n2", "namespace: …LlamaMLP/linear: aten.linear")]  # from the part holding it
    assert found("rotate_half") == [("n1", "doc: apply_rotary (rotate_half)")]
    assert found("float16") == [("w16", "initializer · FLOAT16")]
    assert found("float16 w16") == [("w16", "initializer · FLOAT16")]  # the words narrow
    assert ("w32", "initializer · FLOAT") in found("w32")
    assert all(r["score"] == 20 for r in index.search("LlamaAttention")["results"])


def test_notes_are_read_once_when_first_needed_and_the_model_let_go():
    """The notes (a dynamo export's three a node) are read by the first search that needs them,
    or the warm-up, once: a search by name alone never reads them."""
    index = SearchIndex(torch_noted_model())
    assert index.search("node_linear_1")["results"] and index.note_text == []  # not needed: not read
    index.read_notes()
    texts = list(index.note_text)
    index.read_notes()  # again: nothing more
    assert index.note_text == texts and len(texts) == 5 and index._notes_of is None  # 2 × (namespace, trace), a doc
    assert [r["name"] for r in index.search("LlamaMLP")["results"]] == ["node_linear_1"]
