-- A key's end (`apikey create --expires`; README "Calling the API"): after it the key answers
-- 401 and its streams close. NULL: the key never ends.
ALTER TABLE api_keys ADD COLUMN expires_at TIMESTAMPTZ;
