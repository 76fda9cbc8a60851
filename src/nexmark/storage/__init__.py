"""Object stores: S3 locations and settings (`s3`), a local S3 server for tests (`s3proxy`),
and the file operations the dataset code needs on either a local disk or a store (`files`)."""
