"""The GitHub App: webhook receiver, job queue, sandboxed runs of the engine.

    webhook.py   Flask app factory: signatures, events, 202 after enqueueing, /healthz
    events.py    which webhook events become which jobs
    registration.py  GitHub's manifest flow: registers the App and stores its credentials
    settings.py  configuration from DIFFORACLE_* environment variables
    model.py     the job a pull request event becomes (plain data, JSON round trip)
    state.py     deliveries done, latest head per pull request, leases of running jobs
    queue.py     huey (SQLite embedded by default, Redis by URL), recovery of killed jobs
    runner.py    one job: token, fetch, dependencies, the engine in a sandbox, publishing
    installation.py  the App's JWT, installation tokens narrowed to the job's repository
    checkout.py  git fetch of base and head, the token in git's environment only
    sandbox.py   the sandbox interface
    sandbox_docker.py, sandbox_bwrap.py  the two implementations
    sandbox_choice.py  which one runs: Docker (docker SDK) when it can, else bubblewrap
    image.py     `difforacle app build-image`: the image, built without a registry
    command.py   `difforacle app serve | worker | run | build-image`: their options; the modules
                 above (and the `app` extra's packages) imported only when one runs
"""
