-- q20: expand bids with their auction, for auctions of category 10 (regular join; both sides
-- stay in state). Columns named like both views' are prefixed with bid_ / auction_.
SELECT
  b.auction, b.bidder, b.price, b.channel, b.url,
  b.date_time AS bid_date_time, b.extra AS bid_extra,
  a.item_name, a.description, a.initial_bid, a.reserve,
  a.date_time AS auction_date_time, a.expires, a.seller, a.category,
  a.extra AS auction_extra
FROM bid AS b
INNER JOIN auction AS a ON b.auction = a.id
WHERE a.category = 10
