package io.github.ratelimit.benchmarks;

import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisURI;
import io.lettuce.core.api.StatefulRedisConnection;

/**
 * Empties the benchmark's Redis before a trial when {@code RATELIMIT_BENCH_FLUSH=true}, which
 * {@code benchmarks/run.sh} sets for the {@code redis-server} it starts itself (never set it for a Redis that holds
 * anything else). Every trial then starts on the same empty keyspace: without it, the keys that earlier trials left
 * behind (those of the rejected trials live an hour) grow a run's keyspace to some 170,000 keys by its 16-thread rounds,
 * so that a limiter's figure would depend on what ran before it, and the floor, which touches no key, would not.
 */
final class KeyspaceReset {

	private KeyspaceReset() {
	}

	static void beforeTrial(RedisURI server) {
		if (!"true".equals(System.getenv("RATELIMIT_BENCH_FLUSH"))) {
			return;
		}
		RedisClient client = RedisClient.create(server);
		try (StatefulRedisConnection<String, String> connection = client.connect()) {
			connection.sync().flushall();
		}
		finally {
			client.shutdown();
		}
	}

}
