"""Secrets never reach a note: detect API keys, tokens, passwords and private keys, refuse or redact."""

from __future__ import annotations

import re
from dataclasses import dataclass

from indexer.errors import InputError


@dataclass(frozen=True)
class Finding:
    kind: str  # a short human name, safe to print (the secret itself never is)
    start: int
    end: int


# (kind, pattern). A group named `v` marks the secret part; otherwise the whole match is.
# Order matters where prefixes overlap: the more specific kind comes first.
_RAW = [
    ("private key block", r"-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----(?:.*?-----END (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----|.*)"),
    ("AWS access key id", r"\b(?:AKIA|ASIA|ABIA|ACCA)[0-9A-Z]{16}\b"),
    ("AWS secret access key", r"(?i)\baws_?secret_?(?:access_?)?key\b\s*[:=]\s*[\"']?(?P<v>[A-Za-z0-9/+=]{40})"),
    ("GitHub token", r"\bgh[pousr]_[A-Za-z0-9]{36,255}\b"),
    ("GitHub fine-grained token", r"\bgithub_pat_[A-Za-z0-9_]{22,255}"),
    ("GitLab token", r"\bglpat-[A-Za-z0-9_\-]{20,}"),
    ("Anthropic API key", r"\bsk-ant-[A-Za-z0-9_\-]{20,}"),
    ("OpenAI API key", r"\bsk-(?:proj-|svcacct-|admin-)?[A-Za-z0-9_\-]{20,}"),
    ("Stripe key", r"\b(?:sk|rk|pk)_(?:live|test)_[A-Za-z0-9]{16,}"),
    ("Slack token", r"\bxox[abposre]-[A-Za-z0-9\-]{10,}"),
    ("Slack webhook", r"https://hooks\.slack\.com/(?:services|workflows)/[A-Za-z0-9/_\-]{20,}"),
    ("Google API key", r"\bAIza[0-9A-Za-z_\-]{35}"),
    ("Google OAuth token", r"\bya29\.[0-9A-Za-z_\-]{20,}"),
    ("Hugging Face token", r"\bhf_[A-Za-z0-9]{30,}\b"),
    ("npm token", r"\bnpm_[A-Za-z0-9]{36}\b"),
    ("PyPI token", r"\bpypi-AgEIcHlwaS5vcmc[A-Za-z0-9_\-]{30,}"),
    ("SendGrid API key", r"\bSG\.[A-Za-z0-9_\-]{16,32}\.[A-Za-z0-9_\-]{30,64}"),
    ("Twilio API key", r"\bSK[0-9a-f]{32}\b"),
    ("Mailgun API key", r"\bkey-[0-9a-f]{32}\b"),
    ("Shopify token", r"\bshp(?:at|ca|pa|ss)_[A-Fa-f0-9]{32}\b"),
    ("DigitalOcean token", r"\bdo[por]_v1_[a-f0-9]{64}\b"),
    ("Telegram bot token", r"\b\d{8,10}:AA[A-Za-z0-9_\-]{33}\b"),
    ("Discord bot token", r"\b[MNO][A-Za-z0-9_\-]{23,25}\.[A-Za-z0-9_\-]{6}\.[A-Za-z0-9_\-]{27,38}\b"),
    ("Azure storage key", r"(?i)\bAccountKey=(?P<v>[A-Za-z0-9+/]{40,}={0,2})"),
    ("Azure shared access signature", r"(?i)[?&]sig=(?P<v>[A-Za-z0-9%+/]{30,}={0,2})"),
    ("JSON Web Token", r"\beyJ[A-Za-z0-9_\-]{8,}\.eyJ[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]{8,}"),
    ("bearer token", r"(?i)\bbearer\s+(?P<v>[A-Za-z0-9\-._~+/]{16,}=*)"),
    ("basic auth header", r"(?i)\bauthorization\s*[:=]\s*basic\s+(?P<v>[A-Za-z0-9+/]{12,}={0,2})"),
    ("credentials in a URL", r"\b[a-zA-Z][a-zA-Z0-9+.\-]*://[^\s:/@]+:(?P<v>[^\s@/]+)@"),
    ("password", r"(?i)\b(?:password|passwd|pwd|passphrase)\b\s*(?:is\s*)?[:=]\s*[\"']?(?P<v>[^\s\"',;]{4,})"),
    ("password", r"(?:密码|口令|密碼)\s*(?:是|为|為)?\s*[:：=]?\s*(?P<v>[A-Za-z0-9!@#$%^&*_+\-=.?~]{4,})"),
    ("secret assignment", r"(?i)\b(?:api[_\-]?key|apikey|access[_\-]?token|auth[_\-]?token|refresh[_\-]?token|"
                          r"client[_\-]?secret|secret[_\-]?key|private[_\-]?key|app[_\-]?secret|token|secret)"
                          r"\b\s*[:=]\s*[\"']?(?P<v>[A-Za-z0-9_\-./+=]{12,})"),
    ("payment card number", r"\b(?:\d[ \-]?){12,18}\d\b"),
]
PATTERNS = [(kind, re.compile(p, re.S)) for kind, p in _RAW]


def _luhn_ok(digits: str) -> bool:
    nums = [int(c) for c in digits if c.isdigit()]
    if not 13 <= len(nums) <= 19:
        return False
    total = 0
    for i, n in enumerate(reversed(nums)):
        if i % 2:
            n = n * 2 - 9 if n > 4 else n * 2
        total += n
    return total % 10 == 0


def find_secrets(text: str) -> list[Finding]:
    """Secrets in text, non-overlapping, in order; each span covers only the secret value."""
    found: list[Finding] = []
    for kind, rx in PATTERNS:
        for m in rx.finditer(text):
            start, end = (m.start("v"), m.end("v")) if "v" in rx.groupindex else m.span()
            if kind == "payment card number" and not _luhn_ok(m.group()):
                continue
            if any(f.start < end and start < f.end for f in found):
                continue  # already covered by a more specific kind
            found.append(Finding(kind, start, end))
    return sorted(found, key=lambda f: f.start)


def redact(text: str, findings: list[Finding] | None = None) -> str:
    findings = find_secrets(text) if findings is None else findings
    for f in sorted(findings, key=lambda f: -f.start):
        text = text[:f.start] + f"[REDACTED:{f.kind.replace(' ', '-').lower()}]" + text[f.end:]
    return text


def screen(text: str, redact_secrets: bool = False) -> tuple[str, list[str]]:
    """The text safe to write, and the kinds redacted; refuses (naming kinds only) unless redacting."""
    findings = find_secrets(text)
    if not findings:
        return text, []
    kinds = sorted({f.kind for f in findings})
    if not redact_secrets:
        raise InputError(f"refused: the text contains a secret ({', '.join(kinds)}); nothing was written. "
                         "Remove it, or pass --redact (redact=True) to store the text with it masked")
    return redact(text, findings), kinds
