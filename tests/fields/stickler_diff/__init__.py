"""Differential testing of the field engine against Stickler 1.0 (``stickler-eval``).

* :mod:`.corpus` draws a schema description and a document pair, and builds both
  our :class:`~docevals_mlflow.fields.schema.DocumentSchema` and Stickler's JSON
  Schema from the description;
* :mod:`.stickler_side` reads Stickler's confusion-matrix cells (and its own list
  assignments and similarities);
* :mod:`.our_side` reads our rows, item counts and pairings;
* :mod:`.differences` holds the documented differences (docs/differences.md) as
  narrow predicates;
* :mod:`.harness` compares the two, key by key, names what differs, shrinks
  examples and runs the soak.

``tests/fields/test_stickler_differential.py`` runs it under hypothesis; the larger
seeded soak prints agreement figures::

    python -m tests.fields.stickler_diff --examples 5000 [--seed N] [--family F]
"""
