"""A server with an access token (issue 12): the page asks for it once, then works as usual;
Sign out, in the top bar, asks for it again."""

from __future__ import annotations

from .browser_models import tiny_cnn
from .conftest import serve

TOKEN = "browser-test-token"


def test_signing_in_then_uploading_and_opening_a_model(page, tmp_path, artifacts):
    url, stop = serve({"DATA_DIR": str(tmp_path / "data"), "AUTH_TOKEN": TOKEN})
    try:
        page.goto(url + "/")
        assert "/login" in page.url
        page.fill("#token", "wrong")
        page.click("button[type=submit]")
        page.wait_for_selector(".field-error")
        page.screenshot(path=str(artifacts / "login.png"))
        page.fill("#token", TOKEN)
        page.click("button[type=submit]")
        page.wait_for_url(url + "/")
        # the page's own requests carry the cookie: an upload through the API, then its page
        r = page.request.post(
            url + "/api/models",
            multipart={
                "file": {
                    "name": "cnn.onnx",
                    "mimeType": "application/octet-stream",
                    "buffer": tiny_cnn().SerializeToString(),
                }
            },
        )
        assert r.status == 201, r.text()
        page.goto(f"{url}/models/{r.json()['id']}")
        page.wait_for_selector("#graph[data-state=ready] [data-node-id=n0]")
        sign_out = page.get_by_role("button", name="Sign out")
        box, bar = sign_out.bounding_box(), page.locator(".topbar").bounding_box()
        assert box and bar and box["x"] + box["width"] <= bar["width"] and box["y"] >= bar["y"]  # on screen, in the bar
        page.screenshot(path=str(artifacts / "signed-in-model-page.png"))
        sign_out.click()
        page.wait_for_url(url + "/login")
        page.goto(url + "/")
        assert "/login" in page.url
        assert page.request.get(url + "/api/models").status == 401
    finally:
        stop()


def test_a_shared_link_opens_its_node_after_signing_in_and_an_ended_session_says_how_back(page, tmp_path, artifacts):
    """QA26: a link's #node was lost on the way through the sign-in page; a session ended on
    another tab made every action say "this server needs its access token", Sign out still shown."""
    url, stop = serve({"DATA_DIR": str(tmp_path / "data"), "AUTH_TOKEN": TOKEN})
    try:
        headers = {"Authorization": f"Bearer {TOKEN}"}
        r = page.request.post(
            url + "/api/models",
            headers=headers,
            multipart={
                "file": {
                    "name": "cnn.onnx",
                    "mimeType": "application/octet-stream",
                    "buffer": tiny_cnn().SerializeToString(),
                }
            },
        )
        mid = r.json()["id"]
        page.goto(f"{url}/models/{mid}#rev=0&path=&node=n1")
        assert "/login" in page.url
        page.fill("#token", TOKEN)
        page.click("button[type=submit]")
        page.locator("#sidebar[data-panel=node]").wait_for()
        assert page.locator("#sidebar .panel-subtitle").text_content() == "/features/act1/LeakyRelu"

        # signed out on another tab: the next save says so and how back, keeping the typed name
        other = page.context.new_page()
        other.goto(url + "/")
        other.get_by_role("button", name="Sign out").click()
        other.close()
        form = page.locator("#sidebar .ed-rename-node")
        form.locator("input[name=name]").fill("act")
        form.locator("button[type=submit]").click()
        error = form.locator(".field-error")
        error.wait_for(state="visible")
        assert "You are signed out of this server" in error.text_content()
        sign_in = page.locator(".topbar a.sign-in-again")
        sign_in.wait_for()
        assert sign_in.get_attribute("target") == "_blank" and f"%2Fmodels%2F{mid}%23" in sign_in.get_attribute("href")
        assert page.get_by_role("button", name="Sign out").count() == 0
        page.screenshot(path=str(artifacts / "signed-out-elsewhere.png"))
        assert form.locator("input[name=name]").input_value() == "act"
    finally:
        stop()


def test_who_did_what_shows_in_history_and_the_models_list(page, tmp_path, artifacts):
    """QA26: a team's edits said no one's name. Signed in as "Ana" (the name kept for the next
    sign-in on this browser), her upload and edit say so in History and the models list, where
    a script's edit (X-Studio-Author) says its own; the list sorts by any of its columns."""
    url, stop = serve({"DATA_DIR": str(tmp_path / "data"), "AUTH_TOKEN": TOKEN})
    try:
        page.goto(url + "/")
        page.fill("#token", TOKEN)
        page.fill("#name", "Ana")
        page.click("button[type=submit]")
        page.wait_for_url(url + "/")

        def uploaded(name: str) -> str:
            r = page.request.post(
                url + "/api/models",
                multipart={
                    "file": {
                        "name": name,
                        "mimeType": "application/octet-stream",
                        "buffer": tiny_cnn().SerializeToString(),
                    },
                    "name": name,
                },
            )
            assert r.status == 201, r.text()
            return r.json()["id"]

        first, second = uploaded("b-first.onnx"), uploaded("a-second.onnx")
        op = {"op": "set_attribute", "node": "n1", "name": "alpha", "value": 0.3}
        assert page.request.post(f"{url}/api/models/{first}/edits", data={"base": 0, "ops": [op]}).ok
        script = {"Authorization": f"Bearer {TOKEN}", "X-Studio-Author": "nightly-export"}
        op = {"op": "set_attribute", "node": "n1", "name": "alpha", "value": 0.4}
        r = page.request.post(f"{url}/api/models/{first}/edits", data={"base": 1, "ops": [op]}, headers=script)
        assert r.ok, r.text()

        page.goto(url + "/")
        rows = page.locator("#models-table tbody tr")
        rows.first.wait_for()
        edited = page.locator(f"#models-table tr[data-model-id='{first}'] td.edited-cell")
        assert "by nightly-export" in edited.text_content()
        assert "by Ana" in page.locator(f"#models-table tr[data-model-id='{first}'] td.date-cell").first.text_content()
        assert page.locator(f"#models-table tr[data-model-id='{second}'] td.edited-cell").text_content() == "not edited"
        ids = lambda: [rows.nth(k).get_attribute("data-model-id") for k in range(rows.count())]  # noqa: E731
        assert ids() == [second, first]  # newest upload first
        page.locator("th[data-sort=edited] button").click()
        assert ids() == [first, second]  # edited last first
        assert page.locator("th[data-sort=edited]").get_attribute("aria-sort") == "descending"
        page.locator("th[data-sort=name] button").click()
        assert ids() == [second, first]  # a-second before b-first
        assert page.locator("th[data-sort=name]").get_attribute("aria-sort") == "ascending"
        page.screenshot(path=str(artifacts / "models-who-and-when.png"))
        page.reload()
        rows.first.wait_for()
        assert ids() == [second, first] and page.locator("th[data-sort=name]").get_attribute("aria-sort") == "ascending"

        page.goto(f"{url}/models/{first}")
        page.click("#btn-history")
        page.locator("#sidebar .hist-item[data-revision='2']").wait_for()
        assert page.locator(".hist-item[data-revision='2'] .hist-author").text_content() == " · nightly-export"
        assert page.locator(".hist-item[data-revision='1'] .hist-author").text_content() == " · Ana"
        assert page.locator(".hist-item[data-revision='0'] .hist-author").text_content() == " · Ana"
        page.locator("#sidebar").screenshot(path=str(artifacts / "history-authors.png"))

        # a teammate's Undo: the list says who moved the head, the revision stays its author's
        r = page.request.post(
            f"{url}/api/models/{first}/undo", data={"base": 2}, headers={**script, "X-Studio-Author": "Ben"}
        )
        assert r.ok, r.text()
        page.goto(url + "/")
        edited.wait_for()
        assert "by Ana" in edited.text_content()
        assert edited.locator(".date-moved").text_content().startswith("undone from revision 2 by Ben, ")
        page.locator("#models-table").screenshot(path=str(artifacts / "models-moved-by.png"))

        # the name comes back at the next sign-in on this browser
        page.get_by_role("button", name="Sign out").click()
        page.wait_for_url(url + "/login")
        assert page.locator("#name").input_value() == "Ana"
    finally:
        stop()
