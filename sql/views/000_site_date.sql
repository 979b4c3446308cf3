-- The CRM's calendar day of an instant: its date in the site's time zone (CRM_TIMEZONE, written
-- here when the views are applied), not in the reader's zone or UTC. A contact created at 20:42 in
-- New York on 16 March is counted on 16 March, as the CRM itself counts it.
CREATE OR REPLACE MACRO site_date(ts) AS CAST(timezone('{{site_time_zone}}', ts) AS DATE);
