"""Offline HTML dashboards (plotly) of field comparison, evaluation and split reports.

MLflow shows an HTML artifact in a sandboxed iframe (scripts allowed, no same
origin), so the page can load nothing: no CDN, no sibling file. Every page is
therefore one self-contained file with plotly.js inlined exactly once in ``<head>``
and each figure emitted without its own copy (:mod:`docevals_mlflow.reports.html`).

Pages are deterministic: figure div ids are fixed names, the layout template is
set explicitly, and nothing random or time-dependent is written. User text is
HTML-escaped both in the page and inside figures. Work is bounded for big batches:
bar charts show at most ``MAX_BARS`` entries (worst first, with a note) and the
confidence chart reads an evenly spaced sample of at most ``MAX_CONFIDENCE_ROWS``
rows.

One module per report kind; this one names the entry points:

* :mod:`docevals_mlflow.reports.fields_dashboard`: field comparison reports (with
  :mod:`docevals_mlflow.reports.confidence_dashboard` for the confidence charts);
* :mod:`docevals_mlflow.reports.evaluation_dashboard`: case, pipeline and suite
  reports;
* :mod:`docevals_mlflow.reports.split_dashboard`: split reports;
* :mod:`docevals_mlflow.reports.dashboard_figures`: colours and bars they all draw.

Layout rules (all figures, through :func:`docevals_mlflow.reports.html.figure_layout`):
titles above the plot area with automargin, legends right of it, automargin on every
axis; see docs/dashboards.md, which also explains why plotly.js is inlined in every
page rather than shared.
"""

from __future__ import annotations

from docevals_mlflow.reports.evaluation_dashboard import render_evaluation_dashboard
from docevals_mlflow.reports.fields_dashboard import render_fields_dashboard
from docevals_mlflow.reports.split_dashboard import render_split_dashboard

__all__ = ["render_evaluation_dashboard", "render_fields_dashboard", "render_split_dashboard"]
