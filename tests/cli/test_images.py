"""Images in: ``chat -p --image``, the REPL's attached paths, ``read`` of an image file, MCP
tool results and resources with images, the size caps, and the fallback for an endpoint that
rejects images; against real PNG files, the real ``pictures`` MCP server and the fake model
server driven by the real ``openai`` client."""

from __future__ import annotations

import base64
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from codebot_mcp.cli.app import run
from codebot_mcp.core.media.images import sniff
from tests.cli.repl_driver import drive
from tests.fakes import openai_turns as fo
from tests.fakes.openai_server import FakeOpenAI
from tests.fakes.pngs import png
from tests.helpers import server_entry, write_settings


def chat(capsys: pytest.CaptureFixture[str], cwd: Path, *argv: str) -> tuple[int, str, str]:
    code = run(["--cwd", str(cwd), "chat", *argv])
    out = capsys.readouterr()
    return code, out.out, out.err


def images_in(message: dict[str, Any]) -> list[bytes]:
    """The decoded images of a sent message (either wire)."""
    content = message.get("content")
    found: list[bytes] = []
    for part in content if isinstance(content, list) else []:
        if part.get("type") == "image_url":
            url = part["image_url"]["url"]
        elif part.get("type") == "input_image":
            url = part["image_url"]
        else:
            continue
        assert url.startswith("data:image/")
        found.append(base64.b64decode(url.partition("base64,")[2]))
    return found


def texts_in(message: dict[str, Any]) -> str:
    content = message.get("content")
    if isinstance(content, str):
        return content
    return "\n".join(p.get("text", "") for p in content if "text" in p)


def all_images(body: dict[str, Any]) -> list[bytes]:
    return [i for m in body.get("messages", body.get("input", [])) for i in images_in(m)]


@pytest.fixture
def project(tmp_path: Path, fake: FakeOpenAI) -> Path:
    write_settings(
        tmp_path,
        {"base_url": fake.base_url, "mcp_servers": {"pictures": server_entry("pictures")}},
    )
    (tmp_path / "shot.png").write_bytes(png(40, 30))
    (tmp_path / "fake.png").write_text("not an image at all\n")
    return tmp_path


def test_image_flag_reaches_the_model_as_an_image_part(
    project: Path, fake: FakeOpenAI, capsys: pytest.CaptureFixture[str]
) -> None:
    fake.queue(fo.text("a gradient"))
    code, out, err = chat(capsys, project, "-p", "what is this?", "--image", "shot.png")
    assert code == 0, err
    assert out == "a gradient\n"
    prompt = fake.bodies[0]["messages"][-1]
    assert prompt["role"] == "user"
    assert images_in(prompt) == [(project / "shot.png").read_bytes()]
    assert "what is this?" in texts_in(prompt)
    assert "[attached image: shot.png (PNG, 40×30," in texts_in(prompt)


def test_image_flag_on_the_responses_api_is_an_input_image(
    project: Path, fake: FakeOpenAI, capsys: pytest.CaptureFixture[str]
) -> None:
    fake.queue(fo.text("seen"))
    argv = ["-p", "look", "--image", "shot.png", "--image", "shot.png", "--api", "responses"]
    code, _, err = chat(capsys, project, *argv)
    assert code == 0, err
    assert fake.requests[0].path.endswith("/responses")
    assert all_images(fake.bodies[0]) == [(project / "shot.png").read_bytes()] * 2


def test_image_flag_refuses_a_file_named_png_that_is_not_an_image(
    project: Path, fake: FakeOpenAI, capsys: pytest.CaptureFixture[str]
) -> None:
    code, _, err = chat(capsys, project, "-p", "look", "--image", "fake.png")
    assert code == 2
    assert "--image fake.png: fake.png is not a PNG, JPEG, GIF or WebP image" in err
    assert "checked by its content" in err
    code, _, err = chat(capsys, project, "-p", "look", "--image", "missing.png")
    assert code == 2 and "does not exist" in err
    assert fake.bodies == []


def test_mcp_image_result_follows_the_tool_results_in_a_user_message(
    project: Path, fake: FakeOpenAI, capsys: pytest.CaptureFixture[str]
) -> None:
    fake.queue(
        fo.tool_calls(
            ("mcp__pictures__screenshot", {"width": 20, "height": 10}),
            ("mcp__pictures__two_charts", {}),
        ),
        fo.text("two charts and a page"),
    )
    code, _, err = chat(capsys, project, "-p", "shoot", "--yes")
    assert code == 0, err
    sent = fake.bodies[1]["messages"]
    roles = [m["role"] for m in sent]
    assert roles[-4:] == ["assistant", "tool", "tool", "user"]
    first, second, carrier = sent[-3], sent[-2], sent[-1]
    assert "the page" in first["content"] and "[image: image/png" in first["content"]
    assert "this image follows in the next message" in first["content"]
    assert "these 2 images follow" in second["content"]
    assert "tool_images" not in carrier  # codebot's own mark is never sent
    text = texts_in(carrier)
    call_ids = [c["id"] for c in sent[-4]["tool_calls"]]
    assert f"image 1 of 1 returned by call {call_ids[0]} (mcp__pictures__screenshot)" in text
    assert f"image 2 of 2 returned by call {call_ids[1]} (mcp__pictures__two_charts)" in text
    shapes = [sniff(i) for i in images_in(carrier)]
    assert shapes == [("PNG", 20, 10), ("PNG", 8, 6), ("PNG", 4, 4)]


def test_an_image_block_that_is_not_an_image_stays_a_placeholder(
    project: Path, fake: FakeOpenAI, capsys: pytest.CaptureFixture[str]
) -> None:
    fake.queue(fo.tool_calls(("mcp__pictures__fake_image", {})), fo.text("ok"))
    code, _, err = chat(capsys, project, "-p", "go", "--yes")
    assert code == 0, err
    sent = fake.bodies[1]["messages"]
    assert sent[-1]["role"] == "tool" and "[image: image/png, 14 bytes]" in sent[-1]["content"]
    assert all_images(fake.bodies[1]) == []


def test_read_of_an_image_returns_it_and_a_fake_png_is_refused(
    project: Path, fake: FakeOpenAI, capsys: pytest.CaptureFixture[str]
) -> None:
    fake.queue(
        fo.tool_calls(("read", {"path": "shot.png"}), ("read", {"path": "fake.png"})),
        fo.text("done"),
    )
    code, _, err = chat(capsys, project, "-p", "read them")
    assert code == 0, err
    sent = fake.bodies[1]["messages"]
    assert sent[-3]["content"].startswith("[image: shot.png (PNG, 40×30, ")
    assert sent[-2]["content"].startswith("Error: read: ")
    assert "is named like an image, but its content is not a PNG" in sent[-2]["content"]
    assert images_in(sent[-1]) == [(project / "shot.png").read_bytes()]


def test_an_image_resource_reaches_the_model_as_an_image(
    project: Path, fake: FakeOpenAI, capsys: pytest.CaptureFixture[str]
) -> None:
    fake.queue(
        fo.tool_calls(("read_mcp_resource", {"server": "pictures", "uri": "chart://latest"})),
        fo.text("a chart"),
    )
    code, _, err = chat(capsys, project, "-p", "the chart")
    assert code == 0, err
    sent = fake.bodies[1]["messages"]
    assert sent[-2]["content"].startswith("[image: chart://latest (PNG, 16×10,")
    assert [sniff(i) for i in images_in(sent[-1])] == [("PNG", 16, 10)]


def test_endpoint_that_rejects_images_gets_placeholders_for_the_session(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with FakeOpenAI(no_images=True) as blind:
        write_settings(
            project,
            {"base_url": blind.base_url, "mcp_servers": {"pictures": server_entry("pictures")}},
        )
        blind.queue(fo.tool_calls(("read", {"path": "shot.png"})), fo.text("I cannot see it"))
        code, out, err = chat(capsys, project, "-p", "look", "--image", "shot.png")
        assert code == 0, err
        assert out == "I cannot see it\n"
        assert blind.image_rejections == 1  # the first image request; never again
        assert err.count("rejected images") == 1
        assert "Invalid content type. image_url is only supported by certain models" in err
        retried, after_tool = blind.bodies[1], blind.bodies[2]
        assert all_images(retried) == [] and all_images(after_tool) == []
        prompt = retried["messages"][-1]
        assert isinstance(prompt["content"], str)  # text alone: a plain string
        assert "look" in prompt["content"]
        assert "[image not sent (PNG, 40×30, " in prompt["content"]
        assert "rejected images earlier in this session" in after_tool["messages"][-1]["content"]


def test_request_keeps_the_newest_images_within_max_per_request(
    project: Path, fake: FakeOpenAI, capsys: pytest.CaptureFixture[str]
) -> None:
    write_settings(
        project,
        {
            "base_url": fake.base_url,
            "mcp_servers": {"pictures": server_entry("pictures")},
            "images": {"max_per_request": 1},
        },
    )
    fake.queue(fo.tool_calls(("mcp__pictures__two_charts", {})), fo.text("ok"))
    code, _, err = chat(capsys, project, "-p", "charts", "--yes", "--image", "shot.png")
    assert code == 0, err
    body = fake.bodies[1]
    assert [sniff(i) for i in all_images(body)] == [("PNG", 4, 4)]  # the newest only
    text = "\n".join(texts_in(m) for m in body["messages"])
    assert text.count("left out of this request") == 2
    assert "'images.max_per_request' (1)" in text


def test_an_image_over_max_bytes_is_downscaled_with_pillow(
    project: Path, fake: FakeOpenAI, capsys: pytest.CaptureFixture[str]
) -> None:
    pytest.importorskip("PIL")
    big = png(96, 96, noise=True)
    (project / "big.png").write_bytes(big)
    write_settings(project, {"base_url": fake.base_url, "images": {"max_bytes": 6000}})
    fake.queue(fo.text("small now"))
    code, _, err = chat(capsys, project, "-p", "look", "--image", "big.png")
    assert code == 0, err
    [sent] = all_images(fake.bodies[0])
    assert len(big) > 6000 >= len(sent)
    found = sniff(sent)
    assert found is not None and found[0] == "PNG" and found[1] < 96
    assert "downscaled from 27 KB" in texts_in(fake.bodies[0]["messages"][-1])


@pytest.fixture
def no_pillow(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """``import PIL`` fails, as where a distribution left Pillow out."""
    monkeypatch.setitem(sys.modules, "PIL", None)
    monkeypatch.setitem(sys.modules, "PIL.Image", None)
    yield


def test_without_pillow_an_image_over_max_bytes_is_refused_saying_how_to_fix_it(
    project: Path, fake: FakeOpenAI, capsys: pytest.CaptureFixture[str], no_pillow: None
) -> None:
    (project / "big.png").write_bytes(png(96, 96, noise=True))
    write_settings(project, {"base_url": fake.base_url, "images": {"max_bytes": 6000}})
    code, _, err = chat(capsys, project, "-p", "look", "--image", "big.png")
    assert code == 2
    assert "big.png is 27 KB, over images.max_bytes (6 KB), and Pillow (a dependency" in err
    assert "hint: Give a PNG" not in err
    assert "(pip install pillow) or raise 'images.max_bytes' in settings.json" in err
    assert fake.bodies == []


def test_a_resumed_session_keeps_its_images_and_export_names_them(
    project: Path, fake: FakeOpenAI, capsys: pytest.CaptureFixture[str]
) -> None:
    fake.queue(fo.text("seen"), fo.text("still seen"))
    code, _, err = chat(capsys, project, "-p", "look", "--image", "shot.png")
    assert code == 0, err
    code, _, err = chat(capsys, project, "--continue", "-p", "and again?")
    assert code == 0, err
    assert all_images(fake.bodies[1]) == [(project / "shot.png").read_bytes()]
    code = run(["--cwd", str(project), "export"])
    exported = capsys.readouterr().out
    assert code == 0
    assert "[image: PNG, 40×30, " in exported and "base64" not in exported


@pytest.mark.anyio
async def test_repl_attaches_a_typed_path_and_refuses_a_fake_png(
    project: Path, fake: FakeOpenAI, capsys: pytest.CaptureFixture[str]
) -> None:
    fake.queue(fo.text("a picture"))
    sub = project / "shots"
    sub.mkdir()
    (sub / "my shot.png").write_bytes(png(12, 9))
    code, _ = await drive(
        project,
        [
            (0.3, "what is in '" + str(sub / "my shot.png") + "' and @./shot.png?\r"),
            (lambda: len(fake.bodies) >= 1, "and @./fake.png?\r"),
            (1.0, "\x04"),
        ],
        servers=1,
    )
    assert code == 0
    err = capsys.readouterr().err
    assert f"attached my shot.png (PNG, 12×9, {len(png(12, 9))} bytes)" in err
    assert "attached shot.png (PNG, 40×30, " in err
    assert "fake.png is not a PNG, JPEG, GIF or WebP image" in err
    assert len(fake.bodies) == 1  # the fake one was never sent
    shapes = [sniff(i) for i in all_images(fake.bodies[0])]
    assert shapes == [("PNG", 12, 9), ("PNG", 40, 30)]


@pytest.mark.anyio
async def test_repl_image_flag_goes_with_the_first_message_only(
    project: Path, fake: FakeOpenAI, capsys: pytest.CaptureFixture[str]
) -> None:
    from codebot_mcp.cli.chat_runtime import ChatOptions

    fake.queue(fo.text("seen"), fo.text("nothing new"))
    code, _ = await drive(
        project,
        [
            (0.3, "what is this?\r"),
            (lambda: len(fake.bodies) >= 1, "and now?\r"),
            (lambda: len(fake.bodies) >= 2, "\x04"),
        ],
        options=ChatOptions(images=["shot.png"]),
    )
    assert code == 0
    assert "attached shot.png (PNG, 40×30, " in capsys.readouterr().err
    first, second = fake.bodies
    assert images_in(first["messages"][-1]) == [(project / "shot.png").read_bytes()]
    assert images_in(second["messages"][-1]) == []  # the new prompt has none of its own
    assert len(all_images(second)) == 1  # the first one is still in the history


def test_responses_endpoint_that_rejects_images_falls_back_too(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with FakeOpenAI(no_images=True) as blind:
        write_settings(project, {"base_url": blind.base_url, "api": "responses"})
        blind.queue(fo.text("no eyes"))
        code, out, err = chat(capsys, project, "-p", "look", "--image", "shot.png")
        assert code == 0, err
        assert out == "no eyes\n" and err.count("rejected images") == 1
        assert blind.image_rejections == 1
        assert [r.path.rsplit("/", 1)[1] for r in blind.requests] == ["responses"] * 2
        [prompt] = [i for i in blind.bodies[1]["input"] if i.get("role") == "user"]
        assert "[image not sent (PNG, 40×30, " in prompt["content"]


def test_a_tool_image_over_the_cap_without_pillow_becomes_a_note_for_the_model(
    project: Path, fake: FakeOpenAI, capsys: pytest.CaptureFixture[str], no_pillow: None
) -> None:
    write_settings(
        project,
        {
            "base_url": fake.base_url,
            "mcp_servers": {"pictures": server_entry("pictures")},
            "images": {"max_bytes": 100},
        },
    )
    fake.queue(
        fo.tool_calls(("mcp__pictures__screenshot", {"width": 50, "height": 50})),
        fo.text("no picture then"),
    )
    code, _, err = chat(capsys, project, "-p", "shoot", "--yes")
    assert code == 0, err
    result = fake.bodies[1]["messages"][-1]
    assert result["role"] == "tool"  # no message with images follows
    assert "[codebot: an image was not sent: image is " in result["content"]
    assert "over images.max_bytes (100 bytes)" in result["content"]
    assert "follows in the next message" not in result["content"]


def test_prompt_words_that_attach_and_words_that_do_not(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from codebot_mcp.cli.repl.attach import attached_images
    from codebot_mcp.core.errors import UsageError
    from codebot_mcp.core.media.imagelimits import ImageLimits

    (tmp_path / "a b.png").write_bytes(png(3, 2))
    (tmp_path / "c.jpg").write_bytes(png(5, 4))  # a PNG named .jpg: the bytes decide
    (tmp_path / "data").mkdir()
    (tmp_path / "data" / "chart").write_bytes(png(7, 6))  # no suffix, but a path
    (tmp_path / "chart").write_bytes(png(9, 9))  # a bare word: only text
    (tmp_path / "notes.txt").write_text("hi")
    limits = ImageLimits()

    def shapes(line: str) -> list[tuple[str, int, int] | None]:
        return [sniff(i.data) for i in attached_images(line, tmp_path, limits)]

    assert shapes(r"see a\ b.png, c.jpg! and data/chart") == [
        ("PNG", 3, 2),
        ("PNG", 5, 4),
        ("PNG", 7, 6),
    ]
    assert shapes(f'"{tmp_path / "a b.png"}" twice: "{tmp_path / "a b.png"}"') == [("PNG", 3, 2)]
    assert shapes("chart notes.txt ./notes.txt missing.png @someone http://x/y.png") == []
    err = capsys.readouterr().err
    assert "attached a b.png (PNG, 3×2, " in err and "attached c.jpg (PNG, 5×4, " in err
    # `@notes.txt` mentions a file (a custom command's @path inlines it): never an error
    assert shapes("@notes.txt and @./notes.txt") == []
    (tmp_path / "shot.png").write_text("not a picture")
    with pytest.raises(UsageError, match=r"shot\.png is not a PNG"):
        attached_images("@shot.png", tmp_path, limits)
    with pytest.raises(UsageError, match=r"nothing\.png does not exist; the prompt was not sent"):
        attached_images("see @nothing.png.", tmp_path, limits)
    (tmp_path / "fake.webp").write_text("RIFF")
    with pytest.raises(UsageError, match=r"fake\.webp is not a PNG"):
        attached_images("look at fake.webp", tmp_path, limits)


def test_an_image_refusal_is_not_taken_for_a_structured_output_refusal(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    schema = project / "answer.schema.json"
    schema.write_text('{"type": "object", "properties": {"n": {"type": "integer"}}}')
    with FakeOpenAI(no_images=True) as blind:
        write_settings(project, {"base_url": blind.base_url})
        blind.queue(fo.text('{"n": 2}'))
        argv = ["-p", "count", "--image", "shot.png", "--output-schema", str(schema)]
        code, out, err = chat(capsys, project, *argv)
        assert out.strip() == '{"n": 2}'
        assert code == 0, err
        assert "rejected images" in err and "structured output" not in err
        assert "response_format" in blind.bodies[1]  # still asked for
