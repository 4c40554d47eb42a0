"""The login back-off (ui.guard.LoginThrottle), issue 23 item 4: keyed on the connection's address (a forged
X-Forwarded-For changes nothing), per user name as well as per client, counts that decay, and a right password
that others' failures delay at most one back-off window. A clock is injected: nothing sleeps."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

from askpapers.ui.guard import LoginThrottle

USERS = {"ada": "lovelace", "alan": "turing"}


async def _login(request: Request) -> JSONResponse:
    """Gradio's login answer: 200 for a right password, 400 otherwise."""
    form = await request.form()
    ok = USERS.get(str(form.get("username", "")).strip()) == form.get("password")
    return JSONResponse({"success": ok}, status_code=200 if ok else 400)


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture()
def clock() -> Clock:
    return Clock()


@pytest.fixture()
def throttle(clock: Clock) -> LoginThrottle:
    return LoginThrottle(Starlette(routes=[Route("/login", _login, methods=["POST"])]), clock=clock)


def login(app: Any, client: str, user: str, password: str, multipart: bool = False) -> httpx.Response:
    async def go() -> httpx.Response:
        transport = httpx.ASGITransport(app=app, client=(client, 40000))
        async with httpx.AsyncClient(transport=transport, base_url="http://127.0.0.1") as http:
            form = {"username": user, "password": password}
            if multipart:
                return await http.post("/login", files={k: (None, v) for k, v in form.items()})
            return await http.post("/login", data=form)

    return asyncio.run(go())


def codes(app: Any, client: str, user: str, password: str, n: int) -> list[int]:
    return [login(app, client, user, password).status_code for _ in range(n)]


def test_failures_decay_so_a_typo_after_a_quiet_spell_is_not_punished(throttle: LoginThrottle, clock: Clock) -> None:
    assert codes(throttle, "10.0.0.1", "ada", "wrong", 3) == [400, 400, 400]
    assert login(throttle, "10.0.0.1", "ada", "lovelace").status_code == 429  # the back-off holds
    clock.now += 70  # idle, as in the review
    assert login(throttle, "10.0.0.1", "ada", "typo").status_code == 400
    assert login(throttle, "10.0.0.1", "ada", "lovelace").status_code == 200, "one typo after 70 s is not punished"


def test_guesses_at_one_name_from_many_addresses_back_off(throttle: LoginThrottle, clock: Clock) -> None:
    got = [login(throttle, f"10.0.{i}.1", "ada", f"guess{i}").status_code for i in range(40)]
    assert got[:3] == [400, 400, 400] and got.count(429) >= 35, got
    refused = login(throttle, "10.9.9.9", "ada", "lovelace")  # ada herself, from a clean address
    assert refused.status_code == 429
    window = int(refused.headers["retry-after"])
    assert 1 <= window <= 60, "others' failures on a name hold it for one capped window at most"
    clock.now += window / 2
    assert codes(throttle, "10.0.99.1", "ada", "more", 20) == [429] * 20  # refused tries do not lengthen it
    clock.now += window / 2 + 0.01
    assert login(throttle, "10.9.9.9", "ada", "lovelace").status_code == 200, "the right password, after the window"
    assert login(throttle, "10.0.0.1", "ada", "again").status_code == 400  # her login cleared the name's count


def test_one_client_spraying_names_backs_off_but_others_log_in(throttle: LoginThrottle) -> None:
    got = [login(throttle, "10.0.0.1", f"user{i}", "x", multipart=i % 2 == 1).status_code for i in range(40)]
    assert got[:3] == [400, 400, 400] and got.count(429) >= 35, got
    assert login(throttle, "10.0.0.2", "alan", "turing").status_code == 200, "another client is not held"
    assert login(throttle, "10.0.0.3", "ada", "lovelace").status_code == 200


def test_a_right_password_never_clears_the_clients_count(throttle: LoginThrottle, clock: Clock) -> None:
    """An attacker with an account of their own cannot reset the client's back-off between guesses at others."""
    assert [login(throttle, "10.0.0.1", f"user{i}", "guess").status_code for i in range(3)] == [400, 400, 400]
    clock.now += 1.5  # the 1 s wait is over
    assert login(throttle, "10.0.0.1", "alan", "turing").status_code == 200
    assert login(throttle, "10.0.0.1", "user3", "guess").status_code == 400
    assert login(throttle, "10.0.0.1", "user4", "guess").status_code == 429, "the count went on from 3, not from 0"


def test_an_oversized_login_form_is_refused(throttle: LoginThrottle) -> None:
    assert login(throttle, "10.0.0.1", "ada", "x" * 20_000).status_code == 413


# -- the real server: uvicorn must not take X-Forwarded-For from a loopback client ---------------------------------


@pytest.fixture()
def served(corpus_settings: Any) -> Iterator[str]:
    import gradio as gr

    from askpapers.rag.settings import Settings, UISettings
    from askpapers.ui.app import launch
    from tests.test_ui import free_port

    settings = Settings(store=corpus_settings.store, ui=UISettings(auth="ada:lovelace"))
    # a stopped clock: the first wait never ends, however slowly a busy machine answers the 40 tries
    _, url, _ = launch(settings, port=free_port(), block=False, clock=Clock())
    try:
        yield url.rstrip("/")
    finally:
        gr.close_all()


def test_a_new_x_forwarded_for_on_every_try_is_still_one_client(served: str) -> None:
    got = []
    for i in range(40):
        r = httpx.post(f"{served}/login", data={"username": f"user{i}", "password": "wrong"},
                       headers={"X-Forwarded-For": f"203.0.{i}.7"}, timeout=30)  # fmt: skip
        got.append(r.status_code)
    # three free failures, then the connection's address waits: were each new header a new client, all would be 400
    assert got == [400] * 3 + [429] * 37, got
    late = httpx.post(f"{served}/login", data={"username": "ada", "password": "lovelace"},
                      headers={"X-Forwarded-For": "198.51.100.1"}, timeout=30)  # fmt: skip
    assert late.status_code == 429, "the same connection address is still backing off"
