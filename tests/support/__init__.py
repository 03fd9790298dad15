"""Helpers the tests share (on the path through pytest's `pythonpath` setting: `import support`).

- `repos`: throwaway git repositories (`RepoBuilder`, `make_pr`, `export_commit`, `GIT_ENV`);
- `analysis`: the engine run on them (`run_analyze`) and the tests it writes run on either commit;
- `command_line`: the `difforacle` command in a subprocess, its one-line errors, and the small pull
  request the command line's tests run it on;
- `services`: skipping a test whose service (Docker, Redis, bubblewrap) is missing;
- `paths`: where the checkout's parts are;
- `engine_parts`: the engine's parts set up the way the engine sets them up;
- samples that several test modules share: `catalog_samples`, `influence_samples`, `histories`,
  `report_samples`, `crosshair`;
- the GitHub side: `fake_github` (a fake GitHub over HTTP, tested in `test_fake_github.py` beside
  it), `action` (the Action's event and step environment), `app_helpers` (the App's processes,
  also run as a script), `hostile_project` (attacks for the sandboxes).
"""
