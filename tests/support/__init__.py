"""What the test areas share: the embedded clusters and the clients over either transport
(:mod:`tests.support.fixtures`), one bounded wait (:mod:`tests.support.wait`) and an oracle
that reads a table without the product (:mod:`tests.support.oracle`)."""
