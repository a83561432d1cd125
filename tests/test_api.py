"""The API core over real and built models: upload, views, previews, edits, history, download."""

from __future__ import annotations

import io
import json
import threading
import zipfile

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper
from test_bad_input import small_model
from testkit import ONNX_DATA, node_testcases, upload


@pytest.fixture
def resnet(client):
    data = (ONNX_DATA / "light" / "light_resnet50.onnx").read_bytes()
    r = upload(client, data, "resnet50.onnx")
    assert r.status_code == 201
    return r.get_json()["id"], data


def test_list_and_summary(client, resnet):
    mid, data = resnet
    models = client.get("/api/models").get_json()["models"]
    assert [m["id"] for m in models] == [mid] and models[0]["size"] == len(data)
    s = client.get(f"/api/models/{mid}").get_json()
    proto = onnx.load_from_string(data)
    assert s["ir_version"] == proto.ir_version
    assert s["opset_import"] == [{"domain": o.domain, "version": o.version} for o in proto.opset_import]
    assert s["producer_name"] == proto.producer_name
    assert s["counts"]["nodes"] == len(proto.graph.node)
    assert s["validation"]["ok"] and s["validation"]["message"] == ""
    assert s["validation"]["full"]["ok"] and s["validation"]["inference_errors"] == []


def test_the_models_list_carries_each_models_card(client, resnet):
    """Who made it, its opset and node count, read from the upload's bytes without parsing them,
    follow its head through edits; a revision stored before cards gets one made once, and kept."""
    from app.api.routes import store

    mid, data = resnet
    proto = onnx.load_from_string(data)
    want = {
        "ir_version": proto.ir_version,
        "producer": proto.producer_name,
        "opset": 9,
        "nodes": len(proto.graph.node),
        "ops": sorted({n.op_type for n in proto.graph.node}),  # what the list's filter finds it by
        "metadata": {p.key: p.value for p in proto.metadata_props},
    }
    assert {"Conv", "Relu", "Gemm"} <= set(want["ops"])
    listed = {m["id"]: m for m in client.get("/api/models").get_json()["models"]}
    assert listed[mid]["card"] == want
    r = client.post(
        f"/api/models/{mid}/edits",
        json={"base": 0, "ops": [{"op": "set_model_field", "field": "producer_version", "value": "2.1"}]},
    )
    assert r.status_code == 200, r.get_json()
    listed = {m["id"]: m for m in client.get("/api/models").get_json()["models"]}
    assert listed[mid]["card"] == {**want, "producer": f"{proto.producer_name} 2.1"}

    with client.application.app_context():
        s = store()
        with s.index._conn() as c:  # as an index written before cards holds it
            c.begin()
            c.execute("UPDATE revisions SET card = NULL WHERE model_id = ?", (mid,))
        assert s.revision(mid).card is None
        assert client.get("/api/models").get_json()["models"][0]["card"] == listed[mid]["card"]
        assert s.revision(mid).card == listed[mid]["card"]  # kept
        # a card made before cards named operators and metadata is made again, once
        with s.index._conn() as c:
            c.begin()
            c.execute("UPDATE revisions SET card = ? WHERE model_id = ?", (json.dumps({"nodes": 1}), mid))
        assert client.get("/api/models").get_json()["models"][0]["card"] == listed[mid]["card"]
        assert s.revision(mid).card == listed[mid]["card"]
    meta = {"op": "set_metadata", "key": "dataset", "value": "imagenet"}
    assert client.post(f"/api/models/{mid}/edits", json={"base": 1, "ops": [meta]}).status_code == 200
    listed = {m["id"]: m for m in client.get("/api/models").get_json()["models"]}
    assert listed[mid]["card"]["metadata"] == {**want["metadata"], "dataset": "imagenet"}


def test_graph_json_shapes_and_dtypes(client, resnet):
    mid, data = resnet
    g = client.get(f"/api/models/{mid}/graph").get_json()
    proto = onnx.load_from_string(data)
    x = proto.graph.input[0]
    assert g["inputs"][0] == {
        "name": x.name,
        "dtype": "FLOAT",
        "shape": [d.dim_value for d in x.type.tensor_type.shape.dim],
        "type": {"kind": "tensor", "dtype": "FLOAT", "shape": [d.dim_value for d in x.type.tensor_type.shape.dim]},
    }
    inits = {t["name"]: t for t in g["initializers"]}
    for t in proto.graph.initializer:
        assert inits[t.name]["shape"] == list(t.dims)
        # a few values (a Reshape's shape, a scalar) are listed, for the reader's box and Find
        values = onnx.numpy_helper.to_array(t).reshape(-1)
        if values.size <= 8:
            assert np.allclose(inits[t.name]["values"], values), t.name
        else:
            assert "values" not in inits[t.name], t.name


def test_dim_params_and_unknown_dims(client):
    m = small_model()
    dims = m.graph.input[0].type.tensor_type.shape.dim
    dims[0].dim_param = "batch"
    dims[1].Clear()
    mid = upload(client, m.SerializeToString()).get_json()["id"]
    assert client.get(f"/api/models/{mid}/graph").get_json()["inputs"][0]["shape"] == ["batch", None]


def test_subgraph_paths_open(client):
    case = node_testcases()["test_if"]
    mid = upload(client, case.model.SerializeToString()).get_json()["id"]
    g = client.get(f"/api/models/{mid}/graph").get_json()
    node = g["nodes"][0]
    graphs = {a["name"]: a["value"]["path"] for a in node["attributes"] if a["type"] == "GRAPH"}
    assert set(graphs) == {"then_branch", "else_branch"}
    sub = client.get(f"/api/models/{mid}/graph", query_string={"path": graphs["then_branch"]}).get_json()
    then = next(a.g for a in case.model.graph.node[0].attribute if a.name == "then_branch")
    assert [n["op_type"] for n in sub["nodes"]] == [n.op_type for n in then.node]
    assert sub["breadcrumb"][0]["path"] == "" and sub["breadcrumb"][-1]["path"] == graphs["then_branch"]
    assert sub["nodes"][0]["id"].startswith(graphs["then_branch"] + "/n")


def test_outer_scope_names(client):
    """An If branch reading the main graph's `x` lists it as an outer-scope value, and the If
    node lists it among what it captures."""
    out = helper.make_tensor_value_info("o", TensorProto.FLOAT, [2])
    then = helper.make_graph([helper.make_node("Neg", ["x"], ["o"])], "then", [], [out])
    other = helper.make_graph([helper.make_node("Identity", ["x"], ["o"])], "else", [], [out])
    g = helper.make_graph(
        [helper.make_node("If", ["c"], ["o"], then_branch=then, else_branch=other)],
        "g",
        [
            helper.make_tensor_value_info("c", TensorProto.BOOL, []),
            helper.make_tensor_value_info("x", TensorProto.FLOAT, [2]),
        ],
        [out],
    )
    mid = upload(client, helper.make_model(g).SerializeToString()).get_json()["id"]
    main = client.get(f"/api/models/{mid}/graph").get_json()
    assert main["outer_scope"] == []
    assert main["nodes"][0]["captures"] == ["x"]  # what its branches read from here: drawn as an edge
    body = client.get(f"/api/models/{mid}/graph", query_string={"path": "n0/then_branch"}).get_json()
    assert body["outer_scope"] == ["x"]
    assert "captures" not in body["nodes"][0]


@pytest.mark.parametrize(
    "dtype",
    [
        TensorProto.FLOAT,
        TensorProto.DOUBLE,
        TensorProto.FLOAT16,
        TensorProto.BFLOAT16,
        TensorProto.INT8,
        TensorProto.UINT8,
        TensorProto.INT16,
        TensorProto.UINT16,
        TensorProto.INT32,
        TensorProto.UINT32,
        TensorProto.INT64,
        TensorProto.UINT64,
        TensorProto.BOOL,
        TensorProto.COMPLEX64,
        TensorProto.COMPLEX128,
        TensorProto.FLOAT8E4M3FN,
        TensorProto.FLOAT8E4M3FNUZ,
        TensorProto.FLOAT8E5M2,
        TensorProto.FLOAT8E5M2FNUZ,
        TensorProto.FLOAT8E8M0,
        TensorProto.INT4,
        TensorProto.UINT4,
        TensorProto.FLOAT4E2M1,
        TensorProto.INT2,
        TensorProto.UINT2,
        TensorProto.STRING,
    ],
)
def test_tensor_preview_every_dtype(client, dtype):
    np_dtype = helper.tensor_dtype_to_np_dtype(dtype)
    if dtype == TensorProto.STRING:
        arr = np.array([b"a", b"bc", "é".encode()] * 4, dtype=object).reshape(3, 4)
    elif dtype == TensorProto.BOOL:
        arr = (np.arange(12) % 3 == 0).reshape(3, 4)
    elif np.dtype(np_dtype).kind == "c":
        arr = (np.arange(12) + 1j * np.arange(12)).astype(np_dtype).reshape(3, 4)
    else:
        arr = (np.arange(12) % 4).astype(np_dtype).reshape(3, 4)
    t = numpy_helper.from_array(arr, "T")
    m = small_model()
    m.graph.initializer.append(t)
    mid = upload(client, m.SerializeToString()).get_json()["id"]
    p = client.get(f"/api/models/{mid}/tensors/T?offset=2&count=5").get_json()
    assert p["dtype"] == TensorProto.DataType.Name(dtype) and p["shape"] == [3, 4] and p["offset"] == 2
    expected = numpy_helper.to_array(t).reshape(-1)[2:7]
    if dtype == TensorProto.STRING:
        assert p["values"] == [v.decode() if isinstance(v, bytes) else v for v in expected]
    elif np.dtype(np_dtype).kind == "c":
        assert p["values"] == [[float(v.real), float(v.imag)] for v in expected]
    else:
        as_float = expected.astype(np.float64)
        assert [("NaN" if isinstance(v, str) else v) for v in p["values"]] == [
            ("NaN" if np.isnan(v) else v) for v in as_float.tolist()
        ]
        finite = numpy_helper.to_array(t).astype(np.float64)
        assert p["stats"]["max"] == float(finite[np.isfinite(finite)].max())
        histogram = p["stats"].get("histogram")
        if dtype == TensorProto.BOOL:
            assert histogram is None and p["stats"]["zeros"] == 8  # true and false counts say it all
        elif np.dtype(np_dtype).kind in "iu" or np.dtype(np_dtype).name.startswith(("int", "uint")):
            ints = numpy_helper.to_array(t).astype(np.int64).reshape(-1)  # INT2 wraps 2 and 3 round to -2 and -1
            counts = np.bincount(ints - ints.min()).tolist()  # a bar per value
            assert histogram == {"lo": ints.min(), "hi": ints.max(), "counts": counts, "integers": True}
        else:
            counts, shown = histogram["counts"], finite[np.isfinite(finite)]  # FLOAT8E8M0 has no 0
            assert sum(counts) == shown.size and counts[0] == counts[-1] == 3
            assert p["stats"]["zeros"] == np.count_nonzero(shown == 0)


def test_the_histogram_shows_an_outlier_a_quantization_would_ruin_the_rest_for(client):
    """Weights of which one is 1000x the others: the log-scale histogram keeps the outlier's bar
    (one value, in the last bin) beside the bulk's, and counts the zeros."""
    w = np.random.default_rng(0).standard_normal(1000).astype(np.float32) * 0.1
    w[:100], w[500] = 0.0, 100.0
    m = small_model()
    m.graph.initializer.append(numpy_helper.from_array(w, "outlier"))
    mid = upload(client, m.SerializeToString()).get_json()["id"]
    stats = client.get(f"/api/models/{mid}/tensors/outlier").get_json()["stats"]
    h = stats["histogram"]
    assert len(h["counts"]) == 64 and h["hi"] == 100.0 and h["counts"][-1] == 1 and sum(h["counts"][1:-1]) == 0
    assert stats["zeros"] == 100 and "integers" not in h


def test_uint64_values_stay_exact(client):
    m = small_model()
    m.graph.initializer.append(numpy_helper.from_array(np.array([2**64 - 1, 2**63, 5], np.uint64), "U"))
    mid = upload(client, m.SerializeToString()).get_json()["id"]
    assert client.get(f"/api/models/{mid}/tensors/U").get_json()["values"] == [2**64 - 1, 2**63, 5]


def test_tensor_preview_nan_inf_and_bounds(client, app):
    arr = np.array([1.0, np.nan, np.inf, -np.inf, 2.0] * 5000, np.float32)
    m = small_model()
    m.graph.initializer.append(numpy_helper.from_array(arr, "S"))
    mid = upload(client, m.SerializeToString()).get_json()["id"]
    p = client.get(f"/api/models/{mid}/tensors/S?count=5").get_json()
    assert p["values"] == [1.0, "NaN", "Infinity", "-Infinity", 2.0]
    assert p["stats"]["nan"] == 5000 and p["stats"]["inf"] == 10000 and p["stats"]["max"] == 2.0
    big = client.get(f"/api/models/{mid}/tensors/S?count=100000").get_json()
    assert big["count"] == app.config["PREVIEW_MAX_COUNT"]


def test_constant_attribute_tensor_preview(client):
    case = node_testcases()["test_constant"]
    mid = upload(client, case.model.SerializeToString()).get_json()["id"]
    attr = client.get(f"/api/models/{mid}/graph").get_json()["nodes"][0]["attributes"][0]
    assert attr["type"] == "TENSOR"
    from urllib.parse import quote

    p = client.get(f"/api/models/{mid}/tensors/{quote(attr['value']['ref'], safe='')}?count=1000").get_json()
    expected = numpy_helper.to_array(case.model.graph.node[0].attribute[0].t).reshape(-1)
    assert np.allclose(np.array(p["values"], np.float64), expected.astype(np.float64))


def test_edit_undo_redo_and_history(client, resnet):
    mid, data = resnet
    r = client.post(
        f"/api/models/{mid}/edits",
        json={
            "base": 0,
            "ops": [
                {"op": "set_metadata", "key": "k", "value": "v1"},
                {"op": "set_model_field", "field": "doc_string", "value": "hello"},
            ],
        },
    )
    assert r.status_code == 200 and r.get_json()["revision"] == 1 and len(r.get_json()["changes"]) == 2
    r = client.post(
        f"/api/models/{mid}/edits", json={"base": 1, "ops": [{"op": "set_metadata", "key": "k", "value": "v2"}]}
    )
    assert r.get_json()["revision"] == 2
    assert client.post(f"/api/models/{mid}/undo", json={"base": 2}).get_json()["revision"] == 1
    assert onnx.load_from_string(client.get(f"/api/models/{mid}/download").data).metadata_props[0].value == "v1"
    s = client.post(f"/api/models/{mid}/undo").get_json()
    assert s["revision"] == 0 and s["can_redo"] and not s["can_undo"]
    assert client.get(f"/api/models/{mid}/download").data == data
    assert client.post(f"/api/models/{mid}/redo").get_json()["revision"] == 1
    assert client.post(f"/api/models/{mid}/redo").get_json()["revision"] == 2
    # a new edit after undo drops the redo trail and never reuses a revision number
    client.post(f"/api/models/{mid}/undo")
    r = client.post(
        f"/api/models/{mid}/edits", json={"base": 1, "ops": [{"op": "set_metadata", "key": "k", "value": "v3"}]}
    )
    assert r.get_json()["revision"] == 3 and not r.get_json()["summary"]["can_redo"]
    hist = client.get(f"/api/models/{mid}/revisions").get_json()
    assert hist["head"] == 3 and [h["parent"] for h in hist["revisions"]] == [None, 0, 1, 1]
    assert hist["revisions"][3]["ops"] == [{"op": "set_metadata", "key": "k", "value": "v3"}]
    old = onnx.load_from_string(client.get(f"/api/models/{mid}/download?revision=2").data)
    assert old.metadata_props[0].value == "v2"
    # any revision's summary, as the page shows it read-only: its own contents, the head's undo
    s = client.get(f"/api/models/{mid}?revision=2").get_json()
    assert s["revision"] == 2 and s["head"] == 3 and s["can_undo"] and not s["can_redo"]
    assert {p["key"]: p["value"] for p in s["metadata_props"]}["k"] == "v2"
    assert client.get(f"/api/models/{mid}").get_json()["head"] == 3
    r = client.get(f"/api/models/{mid}?revision=9")
    assert r.status_code == 404 and r.get_json()["error"]["code"] == "unknown_revision"
    assert client.get(f"/api/models/{mid}?revision=x").status_code == 400


def test_concurrent_edits_on_one_base_only_one_wins(app, resnet):
    mid, _ = resnet
    results = []

    def edit(value):
        with app.test_client() as c:
            results.append(
                c.post(
                    f"/api/models/{mid}/edits",
                    json={"base": 0, "ops": [{"op": "set_metadata", "key": "k", "value": value}]},
                ).status_code
            )

    threads = [threading.Thread(target=edit, args=(f"v{i}",)) for i in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sorted(results) == [200] + [409] * 5


def test_external_data_upload_preview_and_zip_download(client, tmp_path):
    m = small_model()
    big = numpy_helper.from_array(np.arange(4096, dtype=np.float32).reshape(64, 64), "E")
    m.graph.initializer.append(big)
    path = tmp_path / "m.onnx"
    onnx.save(m, path, save_as_external_data=True, location="weights.bin", size_threshold=1024)
    r = upload(client, path.read_bytes(), "m.onnx", extra=[((tmp_path / "weights.bin").read_bytes(), "weights.bin")])
    assert r.status_code == 201 and r.get_json()["external_files"] == ["weights.bin"]
    mid = r.get_json()["id"]
    p = client.get(f"/api/models/{mid}/tensors/E?offset=100&count=3").get_json()
    assert p["values"] == [100.0, 101.0, 102.0] and p["stats"]["max"] == 4095.0
    dl = client.get(f"/api/models/{mid}/download")
    assert dl.mimetype == "application/zip"
    z = zipfile.ZipFile(io.BytesIO(dl.data))
    assert sorted(z.namelist()) == ["m.onnx", "weights.bin"]
    out = tmp_path / "out"
    z.extractall(out)
    loaded = onnx.load(out / "m.onnx")
    assert np.array_equal(numpy_helper.to_array(loaded.graph.initializer[-1]), numpy_helper.to_array(big))
    # QA45 #10: unzipped into a shared folder, every file is readable by all, dated when written
    # (members written by name had no mode, unzip made them 0600, and a 1980 date; the store's
    # files copied in kept their 0600)
    again = zipfile.ZipFile(io.BytesIO(client.get(f"/api/models/{mid}/download?layout=external").data))
    for info in [*z.infolist(), *again.infolist()]:
        assert info.external_attr >> 16 == 0o100644 and info.date_time[0] >= 2025, (info.filename, info)


def test_openapi_documents_the_core(client):
    doc = client.get("/api/openapi.json").get_json()
    for path in [
        "/api/models",
        "/api/models/{id}",
        "/api/models/{id}/graph",
        "/api/models/{id}/tensors/{ref}",
        "/api/models/{id}/edits",
        "/api/models/{id}/undo",
        "/api/models/{id}/redo",
        "/api/models/{id}/download",
    ]:
        assert path in doc["paths"]
    schemas = doc["components"]["schemas"]
    ops = {
        schemas[o["$ref"].rsplit("/", 1)[1]]["properties"]["op"]["const"]
        for o in schemas["EditBatch"]["properties"]["ops"]["items"]["oneOf"]
    }
    assert {
        "set_metadata",
        "set_model_field",
        "set_attribute",
        "delete_attribute",
        "rename_node",
        "rename_tensor",
        "set_io_shape",
        "add_output",
        "remove_output",
        "delete_node",
    } <= ops


def test_delete_model(client, resnet):
    mid, _ = resnet
    assert client.delete(f"/api/models/{mid}").status_code == 204
    assert client.get(f"/api/models/{mid}").status_code == 404


def test_revisions_show_the_redo_trail(client, resnet):
    mid, _ = resnet
    for k in range(2):
        client.post(
            f"/api/models/{mid}/edits", json={"base": k, "ops": [{"op": "set_metadata", "key": "k", "value": str(k)}]}
        )
    client.post(f"/api/models/{mid}/undo")
    client.post(f"/api/models/{mid}/undo")
    hist = client.get(f"/api/models/{mid}/revisions").get_json()
    assert hist["head"] == 0 and hist["redo"] == [1, 2]  # next redo first


def test_npy_download(client):
    m = small_model()
    arr = np.arange(12, dtype=np.int16).reshape(3, 4)
    m.graph.initializer.append(numpy_helper.from_array(arr, "A"))
    m.graph.initializer.append(helper.make_tensor("B", TensorProto.BFLOAT16, [2], [1.5, -2.0]))
    mid = upload(client, m.SerializeToString()).get_json()["id"]
    got = np.load(io.BytesIO(client.get(f"/api/models/{mid}/npy/A").data), allow_pickle=False)
    assert got.dtype == np.int16 and np.array_equal(got, arr)
    r = client.get(f"/api/models/{mid}/npy/B")
    assert r.headers["X-Converted-From"] == "bfloat16"
    assert np.load(io.BytesIO(r.data)).tolist() == [1.5, -2.0]
    assert client.get(f"/api/models/{mid}/npy/ghost").status_code == 404
    m.graph.initializer.append(numpy_helper.from_array(np.array(2.5, np.float32), "S"))  # a scalar
    m.graph.initializer.append(numpy_helper.from_array(np.arange(6, dtype=np.float32).reshape(2, 3).T, "T"))
    mid = upload(client, m.SerializeToString()).get_json()["id"]
    scalar = np.load(io.BytesIO(client.get(f"/api/models/{mid}/npy/S").data))
    assert scalar.shape == () and scalar == 2.5  # not a [1] (numpy.ascontiguousarray's way)
    transposed = np.load(io.BytesIO(client.get(f"/api/models/{mid}/npy/T").data))
    assert transposed.tolist() == [[0, 3], [1, 4], [2, 5]]
    # a STRING tensor as numpy's text (an object array was a 500, QA21 F6); bytes of no text: 422
    m.graph.initializer.append(
        helper.make_tensor("V", TensorProto.STRING, [2, 2], [b"cat", b"dog", "été".encode(), b""])
    )
    m.graph.initializer.append(helper.make_tensor("X", TensorProto.STRING, [1], [b"\xff\xfe"]))
    mid = upload(client, m.SerializeToString()).get_json()["id"]
    vocab = np.load(io.BytesIO(client.get(f"/api/models/{mid}/npy/V").data), allow_pickle=False)
    assert vocab.dtype.kind == "U" and vocab.tolist() == [["cat", "dog"], ["été", ""]]
    r = client.get(f"/api/models/{mid}/npy/X")
    assert r.status_code == 422 and "'X'" in r.get_json()["error"]["message"]


def test_tiny_constant_tensors_carry_their_values(client):
    import numpy as np
    from onnx import TensorProto, helper, numpy_helper

    consts = {
        "shape": np.array([1, -1], np.int64),
        "big": np.array([np.iinfo(np.uint64).max], np.uint64),
        "odd": np.array([0.5, np.nan, -np.inf], np.float32),
        "scalar": np.array(3, np.int32),
        "many": np.arange(9, dtype=np.int64),
    }
    nodes = [
        helper.make_node("Constant", [], [k], name=k, value=numpy_helper.from_array(v, k)) for k, v in consts.items()
    ]
    g = helper.make_graph(
        nodes, "g", [], [helper.make_tensor_value_info(k, TensorProto.UNDEFINED, None) for k in consts]
    )
    mid = upload(
        client, helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)]).SerializeToString()
    ).get_json()["id"]
    graph = client.get(f"/api/models/{mid}/graph").get_json()
    value = {n["name"]: n["attributes"][0]["value"] for n in graph["nodes"]}
    assert value["shape"]["values"] == [1, -1] and value["shape"]["shape"] == [2]
    assert value["big"]["values"] == [2**64 - 1]
    assert value["odd"]["values"] == [0.5, "NaN", "-Infinity"]
    assert value["scalar"]["values"] == [3] and value["scalar"]["shape"] == []
    assert "values" not in value["many"] and value["many"]["shape"] == [9]


def test_the_models_list_says_which_heads_the_checker_refuses_once_checked(client, resnet):
    """A model whose opset_import was cut off (the KV-cache QA's yolo_cut.onnx) is listed as
    refused by the checker once its verdict is known; listing runs no check."""
    mid, _ = resnet
    broken = onnx.helper.make_model(
        onnx.helper.make_graph(
            [onnx.helper.make_node("Relu", ["x"], ["y"])],
            "g",
            [onnx.helper.make_tensor_value_info("x", onnx.TensorProto.FLOAT, [2])],
            [onnx.helper.make_tensor_value_info("y", onnx.TensorProto.FLOAT, [2])],
        )
    )
    del broken.opset_import[:]
    bad = upload(client, broken.SerializeToString(), "cut.onnx").get_json()["id"]
    for model_id in (mid, bad):
        assert client.get(f"/api/models/{model_id}/validation").status_code == 200
    listed = {m["id"]: m for m in client.get("/api/models").get_json()["models"]}
    assert listed[mid]["valid"] is True and listed[bad]["valid"] is False


def test_a_model_is_renamed_and_a_bad_name_refused(client):
    mid = upload(client, small_model().SerializeToString(), "model.onnx").get_json()["id"]
    for bad, said in (
        ("", "non-empty"),
        ("a\nb", "control character"),
        ("x" * 201, "at most 200 characters; this one has 201"),
        (7, "non-empty"),
    ):
        r = client.patch(f"/api/models/{mid}", json={"name": bad})
        assert r.status_code == 400 and said in r.get_json()["error"]["message"], (bad, r.get_json())
    assert client.get(f"/api/models/{mid}").get_json()["name"] == "model.onnx"  # untouched
    r = client.patch(f"/api/models/{mid}", json={"name": "  baseline fp32.onnx "})
    assert r.status_code == 200 and r.get_json()["name"] == "baseline fp32.onnx"
    assert r.get_json()["revision"] == 0  # no new revision: the model's bytes are as they were
    listed = {m["id"]: m["name"] for m in client.get("/api/models").get_json()["models"]}
    assert listed[mid] == "baseline fp32.onnx"
    assert "baseline fp32.onnx" in client.get(f"/api/models/{mid}/download").headers["Content-Disposition"]
    assert client.patch("/api/models/nope", json={"name": "x"}).status_code == 404
    # a name without an extension downloads with one (QA16 #2)
    client.patch(f"/api/models/{mid}", json={"name": "encoder v2"})
    assert 'filename="encoder v2.onnx"' in client.get(f"/api/models/{mid}/download").headers["Content-Disposition"]
