"""Static files have fingerprinted URLs cached for a year; responses are compressed.

The fingerprint is checked against the SHA-256 of the file on disk, the compressed bodies are
decompressed here (gzip, brotli, zstd) and compared with the plain response.
"""

from __future__ import annotations

import gzip
import hashlib
import re
from pathlib import Path

import pytest
from test_web_support import REPO, make_app, student, synced_app, url_of

from quizapp.config import ConfigError

STATIC = REPO / "quizapp" / "web" / "static"
PRODUCT = "03-transpose-and-products/05-matrix-product"


def digest(name: str) -> str:
    return hashlib.sha256((STATIC / name).read_bytes()).hexdigest()[:12]


def test_pages_name_static_files_by_content_hash(tmp_path: Path) -> None:
    app = make_app(tmp_path)
    page = app.test_client().get("/login").get_data(as_text=True)
    assert f'href="/static/style.css?v={digest("style.css")}"' in page
    assert f'src="/static/app.js?v={digest("app.js")}"' in page


def test_a_fingerprinted_file_is_cached_for_a_year_any_other_is_revalidated(tmp_path: Path) -> None:
    app = make_app(tmp_path)
    client = app.test_client()
    good = client.get(f"/static/style.css?v={digest('style.css')}")
    assert good.status_code == 200
    assert good.headers["Cache-Control"] == "public, max-age=31536000, immutable"
    assert good.data == (STATIC / "style.css").read_bytes()
    for url in ("/static/style.css", "/static/style.css?v=0123456789ab"):  # none, or an old one
        resp = client.get(url)
        assert resp.status_code == 200 and resp.headers["Cache-Control"] == "no-cache", url
        etag = resp.headers["ETag"]
        again = client.get(url, headers={"If-None-Match": etag})
        assert again.status_code == 304 and again.headers["Cache-Control"] == "no-cache"
    assert client.get("/static/nothing.css?v=abc").status_code == 404


def test_the_fingerprint_follows_the_file(tmp_path: Path) -> None:
    from quizapp.web.assets import file_hash

    app = make_app(tmp_path)
    folder = tmp_path / "static"
    folder.mkdir()
    app.static_folder = str(folder)
    f = folder / "x.css"
    f.write_text("a{}")
    first = file_hash(app, "x.css")
    assert first == hashlib.sha256(b"a{}").hexdigest()[:12]
    f.write_text("b{color:red}")
    assert file_hash(app, "x.css") == hashlib.sha256(b"b{color:red}").hexdigest()[:12]
    assert file_hash(app, "missing.css") is None


def _decode(resp) -> bytes:
    enc = resp.headers.get("Content-Encoding")
    if enc == "gzip":
        return gzip.decompress(resp.data)
    if enc == "br":
        import brotli

        return brotli.decompress(resp.data)
    if enc == "zstd":
        from flask_compress.compat import compression

        return compression.zstd.decompress(resp.data)
    return resp.data


@pytest.mark.parametrize("encoding", ["gzip", "br", "zstd"])
def test_pages_styles_scripts_and_json_are_compressed(tmp_path: Path, encoding: str) -> None:
    app = synced_app(tmp_path)
    client = student(app)
    client.get("/")  # shows (and so drops) the welcome message
    plain = client.get(url_of(PRODUCT))
    packed = client.get(url_of(PRODUCT), headers={"Accept-Encoding": encoding})
    assert "Content-Encoding" not in plain.headers
    assert packed.headers["Content-Encoding"] == encoding
    assert "Accept-Encoding" in packed.headers["Vary"]
    assert len(packed.data) < len(plain.data) / 2

    def strip_tokens(b: bytes) -> bytes:  # the CSRF token is signed with the time: it varies
        return re.sub(rb'value="[^"]{40,}"', b"", b)

    assert strip_tokens(_decode(packed)) == strip_tokens(plain.data)
    for name in ("style.css", "app.js"):
        resp = client.get(f"/static/{name}?v={digest(name)}", headers={"Accept-Encoding": encoding})
        assert resp.headers["Content-Encoding"] == encoding, name
        assert _decode(resp) == (STATIC / name).read_bytes(), name
        assert resp.headers["Cache-Control"].endswith("immutable")
    api = client.get("/api/v1/quizzes", headers={"Accept-Encoding": encoding})
    assert api.headers["Content-Encoding"] == encoding and _decode(api).startswith(b'{"quizzes"')


def test_compression_can_be_turned_off_for_a_proxy_that_compresses(tmp_path: Path) -> None:
    app = make_app(tmp_path, QUIZAPP_COMPRESS=False)
    resp = app.test_client().get("/login", headers={"Accept-Encoding": "gzip, br"})
    assert resp.status_code == 200 and "Content-Encoding" not in resp.headers


def test_the_new_settings_refuse_bad_values(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setenv("QUIZAPP_COMPRESS", "sometimes")
    with pytest.raises(ConfigError, match="QUIZAPP_COMPRESS must be"):
        make_app(tmp_path / "a")
    monkeypatch.setenv("QUIZAPP_COMPRESS", "0")
    monkeypatch.setenv("QUIZAPP_LIMIT_PREVIEW", "0 per minute")
    with pytest.raises(ConfigError, match="QUIZAPP_LIMIT_PREVIEW"):
        make_app(tmp_path / "b")
    monkeypatch.delenv("QUIZAPP_LIMIT_PREVIEW")
    app = make_app(tmp_path / "c")
    assert app.config["QUIZAPP_COMPRESS"] is False
    resp = app.test_client().get("/login", headers={"Accept-Encoding": "gzip"})
    assert "Content-Encoding" not in resp.headers
