"""From what a query's phases observed to its recorded result: the figures of each phase
(`figures`), the `QueryResult` with its repeats, trials and statistics (`record`), and the rate
search's verdict on each trial and its next rate (`sustainable`)."""
