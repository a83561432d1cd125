"""The name a model is listed under: a file called model.onnx (the zoo's and the onnx wheel's
test data name every model so) takes its folder's or archive's name; others keep theirs."""

import pytest

from app.onnx_io.model_names import model_name


@pytest.mark.parametrize(
    ("member", "container", "listed"),
    [
        ("resnet50/model.onnx", "resnet50-v1-7.tar.gz", "resnet50.onnx"),
        ("a/b/test_Conv2d/model.onnx", "", "test_Conv2d.onnx"),
        ("/home/me/models/bert/Model.ONNX", "", "bert.ONNX"),
        ("model.onnx", "squeezenet.zip", "squeezenet.onnx"),
        ("model.onnx", "C:\\exports\\squeezenet.TGZ", "squeezenet.onnx"),
        ("model.onnx", "weights.tar", "weights.onnx"),
        ("model.onnx", "", "model.onnx"),  # nothing better to go by
        ("zoo/resnet50-v1-12.onnx", "zoo.tar.gz", "resnet50-v1-12.onnx"),  # a name of its own stays
        ("export/my_model.onnx", "x.zip", "my_model.onnx"),
        ("models.onnx", "", "models.onnx"),
    ],
)
def test_a_generic_model_file_takes_its_folders_name(member, container, listed):
    assert model_name(member, container) == listed


def test_a_zip_with_model_onnx_at_its_root_is_listed_by_the_zips_name(client):
    import io
    import zipfile

    from browser.browser_models import tiny_cnn
    from testkit import upload

    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as z:
        z.writestr("model.onnx", tiny_cnn().SerializeToString())
    r = upload(client, buf.getvalue(), "mobilenet.zip")
    assert r.status_code == 201 and r.get_json()["name"] == "mobilenet.onnx"
