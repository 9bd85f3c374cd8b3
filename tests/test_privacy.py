"""Secrets are refused (or masked) before a memory touches disk or the index."""

import pytest

from indexer.errors import InputError
from indexer.notes.privacy import find_secrets, redact, screen

# Fake but real-looking secrets, one per format (built here, valid for nothing).
SECRETS = {
    "AWS access key id": "AKIAIOSFODNN7EXAMPLQ",
    "AWS secret access key": "aws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
    "GitHub token": "ghp_" + "aB3dE5fG7hI9jK1lM3nO5pQ7rS9tU1vW3xY5",
    "GitHub fine-grained token": "github_pat_" + "11ABCDEFG0123456789_abcdefghijklmnopqrstuvwxyzABCDEF0123456789",
    "GitLab token": "glpat-" + "xY7zQ2wE9rT4uI1oP6aS",
    "Anthropic API key": "sk-ant-" + "api03-Zx8Yw7Vu6Ts5Rq4Po3Nm2Lk1Ji0Hg9Fe8Dc7Ba6-AAAA",
    "OpenAI API key": "sk-proj-" + "Ab12Cd34Ef56Gh78Ij90Kl12Mn34Op56Qr78St90",
    "Stripe key": "sk_live_" + "51HxYzAbCdEfGhIjKlMnOpQr",
    "Slack token": "xoxb-" + "123456789012-1234567890123-AbCdEfGhIjKlMnOpQrStUvWx",
    "Slack webhook": "https://hooks.slack.com/services/T0123ABCD/B0456EFGH/abcdEFGHijklMNOPqrstUVWX",
    "Google API key": "AIza" + "SyD3x4mpl3K3y_abcdefghijklmnopqrstu",
    "Hugging Face token": "hf_" + "AbCdEfGhIjKlMnOpQrStUvWxYz01234567",
    "npm token": "npm_" + "AbCdEfGhIjKlMnOpQrStUvWxYz0123456789",
    "SendGrid API key": "SG." + "AbCdEfGhIjKlMnOpQrStUv.AbCdEfGhIjKlMnOpQrStUvWxYz0123456789AbCdEfG",
    "Twilio API key": "SK" + "0123456789abcdef0123456789abcdef",
    "Telegram bot token": "123456789:AA" + "HbCdEfGhIjKlMnOpQrStUvWxYz0123456",
    "JSON Web Token": "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U",
    "private key block": "-----BEGIN RSA PRIVATE KEY-----\nMIIEpAIBAAKCAQEA7x3mpl3\n-----END RSA PRIVATE KEY-----",
    "bearer token": "Authorization: Bearer abcDEF123ghiJKL456mnoPQR789",
    "credentials in a URL": "postgres://admin:s3cretPassw0rd@db.example.com:5432/app",
    "Azure storage key": "DefaultEndpointsProtocol=https;AccountName=x;AccountKey=" + "A" * 86 + "==",
    "password": "the wifi password: Tr0ub4dor&3",
    "payment card number": "card 4111 1111 1111 1111 exp 12/29",
}
CORE = {"credentials in a URL": "s3cretPassw0rd", "payment card number": "1111 1111 1111", "private key block": "MIIEpAIBAAKC"}
CHINESE_PASSWORD = "我的邮箱密码是 hunter2024"


@pytest.mark.parametrize("kind,secret", sorted(SECRETS.items()))
def test_each_format_is_found_refused_and_redacted(kind, secret):
    text = f"remember this for later: {secret} thanks"
    assert kind in {f.kind for f in find_secrets(text)}
    with pytest.raises(InputError) as err:
        screen(text)
    assert kind in str(err.value)
    masked = redact(text)
    assert "[REDACTED:" in masked and "remember this for later" in masked
    core = CORE.get(kind, secret.split()[-1][-12:])
    assert core not in str(err.value) and core not in masked


def test_chinese_password_is_refused():
    with pytest.raises(InputError, match="password"):
        screen(CHINESE_PASSWORD)
    assert "hunter2024" not in redact(CHINESE_PASSWORD)


@pytest.mark.parametrize("text", [
    "I use a password manager and never reuse passwords.",
    "我用密码管理器保存所有账号。",
    "The commit 3f5a9c2e1b7d4f6a8c0e2b4d6f8a0c2e4b6d8f0a fixed the bug.",
    "Call me at +86 138 0013 8000 after 6pm.",
    "We chose scikit-learn for the baseline model.",
    "Request id 123e4567-e89b-12d3-a456-426614174000 failed once.",
    "The token bucket limiter allows 100 requests per second.",
])
def test_ordinary_text_passes(text):
    assert find_secrets(text) == []
    assert screen(text) == (text, [])


def test_refusal_writes_and_indexes_nothing(make_memory):
    mem = make_memory({"user/preference.md": "# Preferences\n\n- I like green tea in the afternoon.\n"})
    before = (mem.cfg.home / "user/preference.md").read_bytes()
    chunks = mem.stats()["global"]["chunks"]
    with pytest.raises(InputError):
        mem.add("my OpenAI key is " + SECRETS["OpenAI API key"], type="preference")
    assert (mem.cfg.home / "user/preference.md").read_bytes() == before
    assert mem.stats()["global"]["chunks"] == chunks
    assert not mem.search("OpenAI key", mode="fts")


def test_redact_writes_masked_text(make_memory):
    mem = make_memory()
    res = mem.add("deploy token for CI: " + SECRETS["GitHub token"], type="fact", redact=True)
    assert res["action"] == "appended" and res["redacted"] == ["GitHub token"]
    text = (mem.cfg.home / res["uri"]).read_text()
    assert "[REDACTED:github-token]" in text and "ghp_" not in text
