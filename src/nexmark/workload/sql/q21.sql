-- q21: a channel id for each bid: '0'..'3' for the four big channels (any letter case), else
-- the value of the channel_id parameter in the URL; bids with neither are dropped.
SELECT auction, bidder, price, channel, channel_id
FROM (
  SELECT
    auction, bidder, price, channel,
    CASE LOWER(channel)
      WHEN 'apple' THEN '0'
      WHEN 'google' THEN '1'
      WHEN 'facebook' THEN '2'
      WHEN 'baidu' THEN '3'
      ELSE REGEXP_EXTRACT(url, '[?&]channel_id=([^&]*)', 1)
    END AS channel_id
  FROM bid
)
WHERE channel_id IS NOT NULL AND channel_id <> ''
