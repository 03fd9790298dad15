"""Helpers the tests share (on the path through pytest's `pythonpath` setting; `import support`).

- `repos`: throwaway git repositories (`RepoBuilder`, `make_pr`, `export_commit`, `GIT_ENV`);
- `analysis`: the engine run on them (`run_analyze`) and the tests it writes run on either commit;
- `command_line`: the `difforacle` command in a subprocess, and its one-line errors;
- `services`: skipping a test whose service (Docker, Redis, bubblewrap) is missing;
- `paths`: where the checkout's parts are;
- `engine_parts`: the engine's parts set up the way the engine sets them up;
- samples several test modules share: `catalog_samples`, `influence_samples`, `histories`,
  `report_samples`;
- the GitHub side: `fake_github` (a fake GitHub over HTTP), `app_helpers` (the App's processes,
  also run as a script), `hostile_project` (attacks for the sandboxes).
"""
