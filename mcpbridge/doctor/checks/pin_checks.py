"""Checks against rug pulls and tool poisoning: drift from ``.codebot/mcp-lock.json``, and
instructions hidden in tool descriptions."""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterator

from codebot_mcp.mcpbridge.doctor.checks.check_base import (
    Finding,
    ServerContext,
    ToolContext,
    check,
)
from codebot_mcp.mcpbridge.tools.tool_pins import (
    LockfileError,
    drift,
    lock_path,
    read,
    registry_drift,
)

_ADDRESSED = re.compile(
    r"ignore (all |any )?(previous|prior|above|earlier|other) instructions|"
    r"disregard (the |all |any )?(previous|prior|above|earlier|other)|"
    r"<\s*/?\s*(important|system|instructions?)\s*>|"
    r"(do not|don't|never) (tell|mention|inform|show|reveal|alert)\b[^.]{0,20}\buser|"
    r"without (telling|informing|alerting|asking) the user|"
    r"(hide|conceal) (this|it) from the user|"
    r"you must (always|first) (send|ignore|disregard|hide|upload|forward)\b|"
    r"before (using|calling|answering)[^.]{0,40}\b(send|pass|upload|forward|exfiltrate)\b",
    re.IGNORECASE,
)
"""Text addressed to the model behind the user's back. Honest sequencing ("Before calling
this tool, call list_tables"; "You must first call get_schema") is not: it names no reading or
sending."""
_SECRET_PLACES = re.compile(
    r"~/\.ssh|\bid_(rsa|ed25519|ecdsa|dsa)\b|\.aws/credentials|\.netrc\b|\.npmrc\b|"
    r"\.pypirc\b|\.git-credentials|\.docker/config\.json|\.kube/config|/etc/shadow|"
    r"(~/|\b)\.(cursor|claude|codebot)/[\w./-]*\.json|\bmcp\.json\b",
    re.IGNORECASE,
)
"""Where credentials live: asked to read one of these, a description is poisoned."""
_SECRET_WORDS = re.compile(
    r"(^|[\s'\"`(/])\.env\b|\bapi[_ -]?keys?\b|\bprivate keys?\b|/etc/passwd|"
    r"\b(your|the user'?s?|their)\s+(\w+\s+){0,2}(passwords?|credentials|secrets?|tokens?)\b",
    re.IGNORECASE,
)
"""Words an honest description also uses (".env" as an example file name, "never emits API
keys"): poisoned only when the sentence asks to hand them over."""
_READ = re.compile(
    r"\b(read|cat|open|load|dump|print|output|extract|collect|grab|steal|access|exfiltrate)\b",
    re.IGNORECASE,
)
_SEND = re.compile(
    r"\b(send|pass|include|forward|upload|post|attach|append|embed|provide|transmit|share|"
    r"copy|paste|insert|leak|submit|supply|give|exfiltrate)\b",
    re.IGNORECASE,
)
"""Imperatives, as an instruction to the model is written ("read …", "pass them to …"); a
description of what the tool does says "reads", "sends"."""
_NEGATION = re.compile(
    r"\b(never|not|no|nor|don't|doesn't|won't|cannot|can't|without|except|excluding|avoid\w*|"
    r"redact\w*|mask\w*|omit\w*|strip\w*|filter\w*)\b",
    re.IGNORECASE,
)
_SENTENCE = re.compile(r"(?<=[.!?])\s+|\n+")
_CLAUSE = re.compile(r"[;:,]|\s(?:and then|then|but)\s")


def credential_request(text: str) -> str | None:
    """The credential a description asks the model to read or hand over, or None.

    Sentence by sentence: a place where credentials live (``~/.ssh``, ``.aws/credentials`` …)
    named with an imperative to read or send it, or a credential word (``.env``, ``API key``,
    ``private key``) named with an imperative to send it. A mention in a negated clause
    ("never emits secrets or API keys") is a promise, not a request.
    """
    for sentence in _SENTENCE.split(text):
        clauses = _CLAUSE.split(sentence)
        for pattern, verbs in ((_SECRET_PLACES, (_READ, _SEND)), (_SECRET_WORDS, (_SEND,))):
            for match in pattern.finditer(sentence):
                if _negated(clauses, match.group(0)):
                    continue
                if any(_asked(v, sentence) for v in verbs):
                    return match.group(0).strip()
    return None


_INTRODUCERS = frozenset(
    "and then also please first always now just to must should you simply finally next so or "
    "immediately additionally secretly quietly silently need have will make sure be remember "
    "it's important".split()
)
"""Words that may stand between a clause's start and its imperative ("then pass", "you must
first send", "please include")."""
_CLAUSE_START = re.compile(r"[,;:(]|\b(and|then)\b", re.IGNORECASE)


def _asked(verbs: re.Pattern[str], sentence: str) -> bool:
    """One of ``verbs`` is an imperative in ``sentence``: it opens a clause (after nothing but
    words like "then", "please", "you must") and is not negated. "Responses include the API
    key's name" and "is never read by the model" are not."""
    for match in verbs.finditer(sentence):
        before = sentence[: match.start()]
        if any(_NEGATION.fullmatch(_bare(word)) for word in before.split()[-3:]):
            continue
        head = _CLAUSE_START.split(before)[-1]
        if all(_bare(word).lower() in _INTRODUCERS for word in head.split()):
            return True
    return False


def _bare(word: str) -> str:
    return word.strip(".,;:()'\"`")


def _negated(clauses: list[str], term: str) -> bool:
    """The clause naming ``term`` is negated (all of them, when it is named in several)."""
    holding = [c for c in clauses if term.strip() in c]
    return bool(holding) and all(_NEGATION.search(c) for c in holding)


_OTHER_TOOL = re.compile(r"\bmcp__([A-Za-z0-9-]+(?:_[A-Za-z0-9-]+)*)__[A-Za-z0-9_-]+")


def _invisible(text: str) -> list[str]:
    found: list[str] = []
    for char in text:
        code = ord(char)
        if 0xE0000 <= code <= 0xE007F:
            found.append("Unicode tag characters")
        elif code in (0x200B, 0x200C, 0x200D, 0x2060, 0xFEFF):
            found.append("zero-width characters")
        elif 0x202A <= code <= 0x202E or 0x2066 <= code <= 0x2069:
            found.append("bidi overrides")
        elif unicodedata.category(char) == "Cc" and char not in "\n\t":
            found.append("control characters")
    return sorted(set(found))


@check(
    "tools.lock",
    "server",
    "error",
    "a server's tools changed since `codebot mcp lock` (rug pull; an error with --strict), "
    "or the lock cannot be read (an error)",
)
def _lock(ctx: ServerContext) -> Iterator[Finding]:
    settings = ctx.settings
    try:
        recorded = read(lock_path(settings.project_root, settings.cwd))
    except LockfileError as exc:
        yield ctx.finding("tools.lock", "error", exc.message, exc.hint or "")
        return
    if recorded is None or ctx.client is None:
        return
    info = ctx.client.info
    entry = recorded.get(ctx.name)
    if not isinstance(entry, dict):
        yield ctx.finding(
            "tools.lock",
            "warning",
            f"server '{ctx.name}' is not in the lock file",
            "Review its tools, then run `codebot mcp lock` to pin them.",
        )
        return
    origin = ctx.config.provenance.as_dict() if ctx.config.provenance else None
    changes = registry_drift(entry, origin)
    changes += drift(entry, info.version if info else None, list(ctx.client.tools))
    for change in changes:
        yield ctx.finding(
            "tools.lock",
            "warning",
            f"server '{ctx.name}' differs from the lock: {change}",
            "Review what changed (`codebot mcp list --server "
            f"{ctx.name} --schemas`), then `codebot mcp lock` to accept it.",
        )


@check(
    "tool.hidden_instructions",
    "tool",
    "warning",
    "a description hides instructions: invisible Unicode, text addressed to the model, "
    "other servers' tools, credential files",
)
def _hidden(ctx: ToolContext) -> Iterator[Finding]:
    text = ctx.tool.description
    reasons: list[str] = [f"it contains {what}" for what in _invisible(text)]
    if match := _ADDRESSED.search(text):
        reasons.append(f"it addresses the model ('{match.group(0)}')")
    server = ctx.server.name
    others = sorted({m.group(0) for m in _OTHER_TOOL.finditer(text) if m.group(1) != server})
    if others:
        reasons.append(f"it mentions other servers' tools ({', '.join(others)})")
    if (term := credential_request(text)) is not None:
        reasons.append(f"it asks about credentials ('{term}')")
    for reason in reasons:
        yield ctx.finding(
            "tool.hidden_instructions",
            "warning",
            f"tool '{ctx.tool.original_name}' of server '{server}': {reason} (tool poisoning)",
            f'Do not use it unless you trust the server; hide it with "exclude_tools": '
            f'["{ctx.tool.original_name}"] in {ctx.server.where}.',
        )
