"""Reading-stage metrics of documents: text error rates and edit distances, ANLS and
ANLS*, table structure and reading order, each matching its reference implementation.

Pure arithmetic on text and values: nothing here imports above ``core``.
"""
