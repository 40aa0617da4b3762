"""memtui/core/basics/digests.py gives hashlib's and hmac's digests, by CPython's builtin hashes for small data (so a
one-shot write never loads OpenSSL) and by OpenSSL's for big data or once hashlib is loaded."""

from __future__ import annotations

import hashlib
import hmac
import json
import os
import subprocess
import sys

import pytest

from memtui.core.basics import digests

SIZES = [0, 1, 55, 56, 63, 64, 65, 1000, digests.SMALL - 1, digests.SMALL, digests.SMALL + 7]


@pytest.mark.parametrize("size", SIZES)
def test_the_digests_are_hashlibs(size: int) -> None:
    data = os.urandom(size)
    assert digests.sha1(data).digest() == hashlib.sha1(data).digest()
    assert digests.sha256(data).hexdigest() == hashlib.sha256(data).hexdigest()
    assert digests.sha1(memoryview(data)).digest() == hashlib.sha1(data).digest()
    # CPython's own, which a one-shot write uses (hashlib is loaded in this test's process)
    assert digests._builtin("sha1")(data).digest() == hashlib.sha1(data).digest()
    assert digests._builtin("sha256")(memoryview(data)).hexdigest() == hashlib.sha256(data).hexdigest()
    h = digests.new("sha1", size)
    h.update(data[:size // 2])
    h.update(data[size // 2:])
    assert h.digest() == hashlib.sha1(data).digest()


@pytest.mark.parametrize("key_size", [0, 1, 32, 63, 64, 65, 200])
@pytest.mark.parametrize("size", [0, 1, 64, 5000, digests.SMALL + 1])
def test_the_hmac_is_hmacs(key_size: int, size: int) -> None:
    key, message = os.urandom(key_size), os.urandom(size)
    want = hmac.new(key, message, hashlib.sha256).hexdigest()
    assert digests.hmac_sha256(key, message) == digests._hmac_builtin(key, message) == want


def test_same_compares_as_compare_digest() -> None:
    assert digests.same("ab12", "ab12") and not digests.same("ab12", "ab13") and not digests.same("ab", "abc")
    with pytest.raises(TypeError):
        digests.same("é", "é")  # as hmac.compare_digest: non-ASCII text is refused, not compared


def test_a_process_that_keeps_hashing_loads_openssl_once_the_builtin_has_cost_as_much() -> None:
    probe = ("import json, sys\nfrom memtui.core.basics import digests\n"
             "before = [digests.sha1(b'a' * 100_000).hexdigest() for _ in range(4)]\n"
             "loaded = 'hashlib' in sys.modules\n"
             "after = [digests.sha1(b'a' * 100_000).hexdigest() for _ in range(2)]\n"
             "print(json.dumps([before, loaded, after, 'hashlib' in sys.modules]))")
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    before, loaded_then, after, loaded = json.loads(done.stdout)
    assert not loaded_then and loaded  # 400 KB by the builtin; the next 100 KB would pass SMALL
    assert set(before) == set(after) == {hashlib.sha1(b"a" * 100_000).hexdigest()}


def test_small_data_loads_no_openssl_and_the_builtin_agrees_with_it() -> None:
    probe = ("import json, sys\nfrom memtui.core.basics import digests\n"
             "out = [digests.sha1(b'x' * 1000).hexdigest(), digests.sha256(b'y').hexdigest(),"
             " digests.hmac_sha256(b'k' * 70, b'message'), 'hashlib' in sys.modules, '_hashlib' in sys.modules]\n"
             "print(json.dumps(out))")
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True,
                          env={**os.environ})
    one, two, mac, hashlib_loaded, openssl_loaded = json.loads(done.stdout)
    assert not hashlib_loaded and not openssl_loaded
    assert one == hashlib.sha1(b"x" * 1000).hexdigest() and two == hashlib.sha256(b"y").hexdigest()
    assert mac == hmac.new(b"k" * 70, b"message", hashlib.sha256).hexdigest()
