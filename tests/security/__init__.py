"""Attacks on the trust boundary (README "Trust model"), written as an attacker would write them."""
