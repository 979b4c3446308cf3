"""dlt baseline for bench/backfill.ts: the same contacts pages from the same simulator into DuckDB,
with dlt's REST API source configured for this API's page-number paginator.

    CRM_PASSWORD=... python rest_api_pipeline.py BASE_URL USERNAME PER_PAGE WORKDIR

Prints one JSON line: {"rows": N, "seconds": S}. The password comes from the environment.
"""
import json
import os
import sys
import time

import dlt
from dlt.sources.helpers.rest_client.auth import HttpBasicAuth
from dlt.sources.rest_api import rest_api_source


def main() -> None:
    base_url, username, per_page, workdir = sys.argv[1:5]
    password = os.environ["CRM_PASSWORD"]
    os.makedirs(workdir, exist_ok=True)
    os.environ["DLT_DATA_DIR"] = os.path.join(workdir, "dlt-data")
    os.environ["RUNTIME__LOG_LEVEL"] = "WARNING"
    source = rest_api_source(
        {
            "client": {
                "base_url": base_url.rstrip("/") + "/",
                "auth": HttpBasicAuth(username, password),
                "paginator": {
                    "type": "page_number",
                    "page_param": "page",
                    "base_page": 1,
                    "total_path": "subscribers.last_page",
                },
            },
            "resources": [
                {
                    "name": "contacts",
                    "endpoint": {
                        "path": "subscribers",
                        "params": {"per_page": int(per_page), "sort_by": "id", "sort_type": "ASC"},
                        "data_selector": "subscribers.data",
                    },
                    "primary_key": "id",
                    "write_disposition": "merge",
                }
            ],
        }
    )
    pipeline = dlt.pipeline(
        pipeline_name="crmsync_bench",
        destination=dlt.destinations.duckdb(os.path.join(workdir, "dlt.duckdb")),
        dataset_name="crm",
        pipelines_dir=os.path.join(workdir, "pipelines"),
    )
    started = time.perf_counter()
    pipeline.run(source)
    seconds = time.perf_counter() - started
    with pipeline.sql_client() as client:
        rows = client.execute_sql("SELECT count(*) FROM contacts")[0][0]
    print(json.dumps({"rows": rows, "seconds": round(seconds, 2), "dlt": dlt.__version__}))


if __name__ == "__main__":
    main()
