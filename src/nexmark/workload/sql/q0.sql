-- q0: pass-through; every bid, unchanged. Measures the source and sink alone.
SELECT auction, bidder, price, channel, url, date_time, extra
FROM bid
