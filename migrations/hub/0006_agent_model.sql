-- The upstream model the gateway calls for an agent (its id at the deployment's upstream), when the agent names one.
ALTER TABLE agents ADD COLUMN model TEXT;
