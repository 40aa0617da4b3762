"""Attacks on the trust boundary (docs/write-path.md#trust-model), written as an attacker would write them."""
