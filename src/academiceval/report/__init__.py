"""report stage: saved runs and scores → results.json (one documented schema), leaderboard.md, a static HTML page
with plots, and a page of example outputs beside their references.

Entry points: `academiceval.report.render.make_report` (what `academiceval report` calls) and
`academiceval.report.results.build_results` / `Results` (the data alone).
"""
