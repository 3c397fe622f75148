-- The upstream the gateway calls for an agent, when the agent names one: a named upstream of the deployment
-- (UPSTREAM_<NAME>_URL, _API, _MODEL and the secret _KEY) and the model's id there.
ALTER TABLE agents ADD COLUMN model TEXT;
ALTER TABLE agents ADD COLUMN upstream TEXT;
