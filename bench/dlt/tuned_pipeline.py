"""Tuned dlt baseline for bench/backfill.ts, written as a skilled dlt user would: the page numbers
come from one probe, a parallelized transformer fetches the pages (BENCH_DLT_WORKERS threads,
default 4), rows are not unpacked into child tables (max_table_nesting=0) and are appended.

    CRM_PASSWORD=... python tuned_pipeline.py BASE_URL USERNAME PER_PAGE WORKDIR

Prints one JSON line: {"rows": N, "seconds": S, "dlt": version, "workers": W}. The password comes
from the environment.
"""
import json
import os
import sys
import time

import dlt
from dlt.sources.helpers import requests


def main() -> None:
    base_url, username, per_page, workdir = sys.argv[1:5]
    per_page = int(per_page)
    password = os.environ["CRM_PASSWORD"]
    workers = int(os.environ.get("BENCH_DLT_WORKERS", "4"))
    os.makedirs(workdir, exist_ok=True)
    os.environ["DLT_DATA_DIR"] = os.path.join(workdir, "dlt-data")
    os.environ["RUNTIME__LOG_LEVEL"] = "WARNING"
    os.environ["EXTRACT__WORKERS"] = str(workers)
    url = base_url.rstrip("/") + "/subscribers"
    auth = (username, password)

    def fetch(page: int, size: int) -> dict:
        params = {"page": page, "per_page": size, "sort_by": "id", "sort_type": "ASC"}
        res = requests.get(url, params=params, auth=auth)
        res.raise_for_status()
        return res.json()["subscribers"]

    @dlt.resource(selected=False)
    def pages():
        last = fetch(1, 1)["last_page"]
        yield from range(1, -(-int(last) // per_page) + 1)

    @dlt.transformer(data_from=pages, name="contacts", write_disposition="append", max_table_nesting=0, parallelized=True)
    def contacts(page: int):
        yield fetch(page, per_page)["data"]

    @dlt.source(max_table_nesting=0)
    def crm():
        return pages, contacts

    pipeline = dlt.pipeline(
        pipeline_name="crmsync_bench_tuned",
        destination=dlt.destinations.duckdb(os.path.join(workdir, "dlt.duckdb")),
        dataset_name="crm",
        pipelines_dir=os.path.join(workdir, "pipelines"),
    )
    started = time.perf_counter()
    pipeline.run(crm())
    seconds = time.perf_counter() - started
    with pipeline.sql_client() as client:
        rows = client.execute_sql("SELECT count(*) FROM contacts")[0][0]
    print(json.dumps({"rows": rows, "seconds": round(seconds, 2), "dlt": dlt.__version__, "workers": workers}))


if __name__ == "__main__":
    main()
