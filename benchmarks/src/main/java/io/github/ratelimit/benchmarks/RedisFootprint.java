package io.github.ratelimit.benchmarks;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;

import io.github.ratelimit.Algorithm;
import io.github.ratelimit.RateLimitPolicy;
import io.github.ratelimit.redis.RedisRateLimitStore;
import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisURI;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.api.sync.RedisCommands;

import org.springframework.data.redis.connection.RedisStandaloneConfiguration;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;

/**
 * What one active key costs Redis, per algorithm, for {@code docs/scaling.md}: its bytes ({@code MEMORY USAGE} of the
 * keys of one decision, and the growth of {@code used_memory} per key) and the CPU time {@code redis-server} spends per
 * decision on 10,000 keys (from {@code INFO cpu}, and the part inside scripts from {@code INFO commandstats}), for one
 * caller and for 16 concurrent callers (whose decisions are coalesced).
 * <p>
 * Run against a Redis of its own, which it flushes before each algorithm:
 * {@code RATELIMIT_BENCH_REDIS=127.0.0.1:<port> RATELIMIT_BENCH_FLUSH=true java -cp benchmarks/target/benchmarks.jar
 * io.github.ratelimit.benchmarks.RedisFootprint}.
 */
public final class RedisFootprint {

	private static final int KEYS = 10_000;

	private static final int ROUNDS = 5;

	private RedisFootprint() {
	}

	public static void main(String[] args) throws Exception {
		if (!"true".equals(System.getenv("RATELIMIT_BENCH_FLUSH"))) {
			throw new IllegalStateException("Set RATELIMIT_BENCH_FLUSH=true: this measurement flushes its Redis");
		}
		RedisURI server = RedisLimiters.server();
		RedisClient client = RedisClient.create(server);
		LettuceConnectionFactory factory = new LettuceConnectionFactory(
				new RedisStandaloneConfiguration(server.getHost(), server.getPort()));
		factory.afterPropertiesSet();
		factory.start();
		try (StatefulRedisConnection<String, String> connection = client.connect()) {
			RedisCommands<String, String> redis = connection.sync();
			System.out.println(redis.info("server").lines().filter((line) -> line.startsWith("redis_version")).findFirst()
				.orElse("redis_version:?"));
			System.out.printf("%-28s %10s %12s %14s %14s %14s %14s%n", "algorithm", "bytes/key", "used/key",
					"cpu us 1 thr", "script us 1", "cpu us 16 thr", "script us 16");
			for (Algorithm algorithm : Algorithm.values()) {
				measure(redis, factory, algorithm, 1);
				if (algorithm == Algorithm.SLIDING_LOG) {
					measure(redis, factory, algorithm, 100);
				}
			}
		}
		finally {
			factory.destroy();
			client.shutdown();
		}
	}

	/**
	 * Measure one algorithm with every key holding {@code admissions} admissions (the sliding log's state grows with
	 * them; the others' does not).
	 */
	private static void measure(RedisCommands<String, String> redis, LettuceConnectionFactory factory,
			Algorithm algorithm, int admissions) throws Exception {
		redis.flushall();
		String prefix = "fp-" + UUID.randomUUID().toString().substring(0, 8);
		RateLimitPolicy policy = RateLimitPolicy.builder("orders")
			.algorithm(algorithm)
			.limit(1_000)
			.window(Duration.ofMinutes(10))
			.build();
		try (RedisRateLimitStore store = RedisRateLimitStore.builder(factory).keyPrefix(prefix).timeout(Duration.ofSeconds(10))
			.build()) {
			store.tryAcquire(policy, "warm-up", 1);
			redis.del(redis.keys(prefix + ":*").toArray(new String[0]));
			long usedBefore = usedMemory(redis);
			for (int i = 0; i < KEYS; i++) {
				for (int a = 0; a < admissions; a++) {
					store.tryAcquire(policy, key(i), 1);
				}
			}
			long usedPerKey = (usedMemory(redis) - usedBefore) / KEYS;
			long bytes = 0;
			List<String> keys = redis.keys(prefix + ":*");
			for (String key : keys) {
				bytes += redis.memoryUsage(key);
			}
			long bytesPerKey = bytes / KEYS;
			long entries = 0;
			for (String key : keys) {
				if (key.contains("}:log:")) {
					entries += redis.llen(key) / 2; // two elements an entry: time, cost
				}
			}
			double[] single = cpu(redis, store, policy, 1);
			double[] concurrent = cpu(redis, store, policy, 16);
			String label = algorithm + ((algorithm == Algorithm.SLIDING_LOG)
					? " (" + admissions + " adm., " + entries / KEYS + " entr.)" : "");
			System.out.printf("%-28s %10d %12d %14.2f %14.2f %14.2f %14.2f%n", label, bytesPerKey, usedPerKey, single[0],
					single[1], concurrent[0], concurrent[1]);
		}
	}

	/**
	 * Decide {@code ROUNDS} times for each key from {@code threads} callers; return redis-server CPU and script time
	 * per decision, in microseconds.
	 */
	private static double[] cpu(RedisCommands<String, String> redis, RedisRateLimitStore store, RateLimitPolicy policy,
			int threads) throws Exception {
		redis.configResetstat();
		double before = CommandCounter.cpuSeconds(redis.info("cpu"));
		ExecutorService callers = Executors.newFixedThreadPool(threads);
		try {
			List<Future<?>> done = new ArrayList<>();
			for (int t = 0; t < threads; t++) {
				int first = t;
				done.add(callers.submit(() -> {
					for (int round = 0; round < ROUNDS; round++) {
						for (int i = first; i < KEYS; i += threads) {
							store.tryAcquire(policy, key(i), 1);
						}
					}
				}));
			}
			for (Future<?> future : done) {
				future.get();
			}
		}
		finally {
			callers.shutdown();
		}
		String stats = redis.info("commandstats");
		double cpu = CommandCounter.cpuSeconds(redis.info("cpu")) - before;
		long scriptMicros = 0;
		for (String line : stats.split("\r\n")) {
			if (line.startsWith("cmdstat_evalsha:") || line.startsWith("cmdstat_eval:")) {
				int start = line.indexOf("usec=") + "usec=".length();
				scriptMicros += Long.parseLong(line.substring(start, line.indexOf(',', start)));
			}
		}
		long decisions = (long) KEYS * ROUNDS;
		return new double[] { cpu * 1e6 / decisions, (double) scriptMicros / decisions };
	}

	/** A key as a per-user policy would see one: a user id of 12 characters. */
	private static String key(int i) {
		return String.format("user-%07d", i);
	}

	private static long usedMemory(RedisCommands<String, String> redis) {
		return redis.info("memory")
			.lines()
			.filter((line) -> line.startsWith("used_memory:"))
			.mapToLong((line) -> Long.parseLong(line.substring("used_memory:".length()).trim()))
			.findFirst()
			.orElseThrow();
	}

}
