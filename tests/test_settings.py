"""Configuration (issue 14): flags, then ONNX_STUDIO_* environment variables, then a TOML config
file, then defaults; a bad value is refused naming where it came from; README lists them all."""

from __future__ import annotations

import argparse
from pathlib import Path

import pytest

from app import settings

ROOT = Path(__file__).resolve().parent.parent


def parse(argv: list[str]) -> argparse.Namespace:
    p = argparse.ArgumentParser()
    settings.add_flags(p)
    return p.parse_args(argv)


def test_flags_then_environment_then_file_then_defaults(tmp_path):
    config = tmp_path / "studio.toml"
    config.write_text('port = 7000\nworkers = 3\nlog_format = "json"\nallowed_hosts = ["a.example", "b.example"]\n')
    env = {"ONNX_STUDIO_CONFIG": str(config), "ONNX_STUDIO_PORT": "7100", "ONNX_STUDIO_THREADS": "4"}
    values = settings.resolve(parse(["--port", "7200"]), env)
    assert values["port"] == 7200  # the flag
    assert values["threads"] == 4  # the environment
    assert values["workers"] == 3 and values["log_format"] == "json"  # the file
    assert values["allowed_hosts"] == ["a.example", "b.example"]
    assert values["host"] == "127.0.0.1" and values["log_level"] == "info"  # defaults
    assert "data_dir" not in values  # create_app's own default
    values = settings.resolve(parse(["--allowed-host", "x.example", "--allowed-host", "y.example"]), {})
    assert values["allowed_hosts"] == ["x.example", "y.example"]
    assert settings.resolve(parse([]), {"ONNX_STUDIO_ALLOWED_HOSTS": "p.example, q.example"})["allowed_hosts"] == [
        "p.example",
        "q.example",
    ]


def test_the_flask_config_the_settings_make(tmp_path):
    values = settings.resolve(
        parse(["--data-dir", str(tmp_path), "--max-upload-bytes", "1000", "--auth-token", "t0ken-0f-twelve"]), {}
    )
    assert settings.flask_config(values) == {
        "DATA_DIR": str(tmp_path),
        "MAX_CONTENT_LENGTH": 1000,
        "AUTH_TOKEN": "t0ken-0f-twelve",
    }


@pytest.mark.parametrize(
    ("argv", "env", "file", "words"),
    [
        (["--port", "eighty"], {}, None, "--port: 'eighty'"),
        ([], {"ONNX_STUDIO_WORKERS": "0"}, None, "ONNX_STUDIO_WORKERS: '0' must be 1 or more"),
        ([], {}, 'log_format = "xml"', "log_format: 'xml' must be one of text, json"),
        ([], {}, "colour = 3", "unknown setting colour"),
        ([], {}, "port = ", "config file"),
        (["--auth-token", "S3cr3t"], {}, None, "is too short for an access token (at least 12 characters)"),
        # a mistyped variable quietly ignored left a host's blobs in its own folder (QA18 F26)
        (
            [],
            {"ONNX_STUDIO_BLOB_URI": "s3://b/p"},
            None,
            "ONNX_STUDIO_BLOB_URI is not a setting (did you mean ONNX_STUDIO_BLOB_URL?)",
        ),
    ],
)
def test_a_bad_value_names_where_it_came_from(tmp_path, argv, env, file, words):
    if file is not None:
        path = tmp_path / "bad.toml"
        path.write_text(file)
        env = {**env, "ONNX_STUDIO_CONFIG": str(path)}
    with pytest.raises(settings.SettingsError, match=None) as info:
        settings.resolve(parse(argv), env)
    assert words in str(info.value)


def test_a_blank_token_is_none():
    # as ONNX_STUDIO_AUTH_TOKEN= : none given (a server beyond loopback then makes one up)
    assert settings.resolve(parse(["--auth-token", " "]), {})["auth_token"] == ""


def test_the_readme_lists_every_setting():
    readme = (ROOT / "README.md").read_text()
    table = readme[readme.index("## Configuration") :]
    for s in settings.SETTINGS:
        assert f"`{s.flag}`" in table and f"`{s.env}`" in table and f"`{s.key}`" in table, s.key
    assert "`--config`" in table and f"`{settings.CONFIG_ENV}`" in table


def test_serve_refuses_a_bad_setting(capsys):
    from app.cli import main

    with pytest.raises(SystemExit) as info:
        main(["serve", "--workers", "none"])
    assert info.value.code == 2
    assert "--workers: 'none'" in capsys.readouterr().err
