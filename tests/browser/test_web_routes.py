"""The page routes and the /vendor route serving dagre from node_modules (no browser needed)."""

from __future__ import annotations

import pytest

from app import create_app


@pytest.fixture
def client(tmp_path):
    return create_app({"DATA_DIR": str(tmp_path / "data"), "TESTING": True}).test_client()


def test_pages_render(client):
    index = client.get("/")
    assert index.status_code == 200
    assert b'id="file-input"' in index.data
    page = client.get("/models/abc123")
    assert page.status_code == 200
    assert b'id="graph"' in page.data and b'data-state="loading"' in page.data
    assert b'data-model-id="abc123"' in page.data


def test_model_id_is_escaped_in_the_page(client):
    page = client.get('/models/"><img src=x onerror=alert(1)>')
    assert page.status_code == 200
    assert b"<img src=x" not in page.data
    assert b"&lt;img src=x onerror=alert(1)&gt;" in page.data


def test_vendor_serves_dagre_umd_build(client):
    r = client.get("/vendor/dagre/dagre.min.js")
    assert r.status_code == 200
    assert b"var dagre=" in r.data[:200]
    r.close()


@pytest.mark.parametrize(
    "url, marker",
    [
        ("/vendor/marked/marked.esm.js", b"marked"),
        ("/vendor/dompurify/purify.es.mjs", b"DOMPurify"),
    ],
)
def test_vendor_serves_markdown_libraries_as_es_modules(client, url, marker):
    r = client.get(url)
    assert r.status_code == 200
    assert r.mimetype == "text/javascript"  # browsers refuse a module of any other type
    assert marker in r.data
    assert b"export" in r.data
    r.close()


def test_base_page_names_the_vendor_modules(client):
    page = client.get("/models/abc123").data
    assert b'data-marked="/vendor/marked/marked.esm.js"' in page
    assert b'data-purify="/vendor/dompurify/purify.es.mjs"' in page


@pytest.mark.parametrize(
    "url",
    [
        "/vendor/marked/../package.json",
        "/vendor/marked/marked.d.ts",
        "/vendor/dompurify/purify.es.d.mts",
        "/vendor/dompurify/..%2FLICENSE",
        "/vendor/dagre/../package.json",
        "/vendor/dagre/..%2Fpackage.json",
        "/vendor/dagre/%2E%2E/%2E%2E/graphlib/package.json",
        "/vendor/dagre/types/index.d.ts",
        "/vendor/dagre/nope.js",
        "/vendor/graphlib/graphlib.js",
        "/vendor/..%2F..%2Fapp/__init__.py",
    ],
)
def test_vendor_serves_nothing_else(client, url):
    assert client.get(url).status_code == 404
