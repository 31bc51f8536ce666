package io.github.ratelimit.benchmarks;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;

import io.github.bucket4j.BucketConfiguration;
import io.github.bucket4j.distributed.BucketProxy;
import io.github.bucket4j.distributed.ExpirationAfterWriteStrategy;
import io.github.bucket4j.distributed.proxy.RemoteBucketBuilder;
import io.github.bucket4j.distributed.proxy.optimization.Optimizations;
import io.github.bucket4j.redis.lettuce.Bucket4jLettuce;
import io.github.bucket4j.redis.lettuce.cas.LettuceBasedProxyManager;
import io.github.ratelimit.Algorithm;
import io.github.ratelimit.RateLimitPolicy;
import io.github.ratelimit.limiter.RateLimiter;
import io.github.ratelimit.redis.RedisRateLimitStore;
import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisURI;
import io.lettuce.core.ScriptOutputType;
import io.lettuce.core.cluster.api.async.RedisClusterAsyncCommands;

import org.springframework.data.redis.connection.RedisStandaloneConfiguration;
import org.springframework.data.redis.connection.lettuce.LettuceConnection;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;

/**
 * Redis limiters configured to the same limit, each on its own connection to the same server: ours (every
 * algorithm, through the application's Spring Data Redis connection factory), Bucket4j's Lettuce proxy manager
 * (compare-and-swap), with and without its batching optimization, and the floor: a bare EVALSHA of
 * {@code return 1} on the same kind of connection as ours.
 */
final class RedisLimiters {

	private RedisLimiters() {
	}

	/**
	 * The Redis to measure against, from {@code RATELIMIT_BENCH_REDIS} ({@code host:port}), which
	 * {@code benchmarks/run.sh} sets to a {@code redis-server} it started.
	 */
	static RedisURI server() {
		String address = System.getenv("RATELIMIT_BENCH_REDIS");
		if (address == null || address.isBlank()) {
			address = System.getProperty("ratelimit.bench.redis");
		}
		if (address == null || address.isBlank()) {
			throw new IllegalStateException("Set RATELIMIT_BENCH_REDIS=host:port (benchmarks/run.sh starts a redis-server "
					+ "and sets it)");
		}
		String[] parts = address.trim().split(":");
		return RedisURI.create(parts[0], Integer.parseInt(parts[1]));
	}

	static Limiter create(String name, long limit, Duration window) {
		RedisURI server = server();
		return switch (name) {
			case "ratelimit-fixed" -> ours(server, Algorithm.FIXED, limit, window, true, false);
			case "ratelimit-sliding-log" -> ours(server, Algorithm.SLIDING_LOG, limit, window, true, false);
			case "ratelimit-sliding-counter" -> ours(server, Algorithm.SLIDING_COUNTER, limit, window, true, false);
			case "ratelimit-token-bucket" -> ours(server, Algorithm.TOKEN_BUCKET, limit, window, true, false);
			case "ratelimit-leaky-bucket" -> ours(server, Algorithm.LEAKY_BUCKET, limit, window, true, false);
			case "ratelimit-fixed-uncoalesced" -> ours(server, Algorithm.FIXED, limit, window, false, false);
			case "ratelimit-fixed-deny-cache" -> ours(server, Algorithm.FIXED, limit, window, true, true);
			case "ratelimit-fixed-lease" -> ours(server, Algorithm.FIXED, limit, window, true, true,
					RateLimitPolicy.LEASE_AUTO);
			case "bucket4j" -> bucket4j(server, limit, window, false);
			case "bucket4j-batching" -> bucket4j(server, limit, window, true);
			case "floor" -> floor(server);
			default -> throw new IllegalArgumentException("Unknown limiter " + name);
		};
	}

	private static LettuceConnectionFactory connectionFactory(RedisURI server) {
		LettuceConnectionFactory factory = new LettuceConnectionFactory(
				new RedisStandaloneConfiguration(server.getHost(), server.getPort()));
		factory.afterPropertiesSet();
		factory.start();
		return factory;
	}

	private static Limiter ours(RedisURI server, Algorithm algorithm, long limit, Duration window, boolean coalesce,
			boolean denyCache) {
		return ours(server, algorithm, limit, window, coalesce, denyCache, 0);
	}

	/** Ours; behind a {@code RateLimiter} (deny cache, leases) if {@code limiter}, else the store alone. */
	private static Limiter ours(RedisURI server, Algorithm algorithm, long limit, Duration window, boolean coalesce,
			boolean limiter, long lease) {
		LettuceConnectionFactory factory = connectionFactory(server);
		RedisRateLimitStore store = RedisRateLimitStore.builder(factory)
			.keyPrefix("bench-" + UUID.randomUUID())
			.timeout(Duration.ofSeconds(5))
			.coalesce(coalesce)
			.maxInFlight(Integer.getInteger("bench.maxInFlight", RedisRateLimitStore.DEFAULT_MAX_IN_FLIGHT))
			.build();
		RateLimitPolicy policy = RateLimitPolicy.builder("bench").algorithm(algorithm).limit(limit).window(window)
			.lease(lease).build();
		if (limiter) {
			RateLimiter rateLimiter = RateLimiter.builder(store).denyCache(true).build();
			return new Limiter() {

				@Override
				public boolean tryAcquire(String key) {
					return rateLimiter.tryAcquire(policy, key).allowed();
				}

				@Override
				public void close() {
					store.close();
					factory.destroy();
				}

			};
		}
		return new Limiter() {

			@Override
			public boolean tryAcquire(String key) {
				return store.tryAcquire(policy, key, 1).allowed();
			}

			@Override
			public void close() {
				store.close();
				factory.destroy();
			}

		};
	}

	private static Limiter bucket4j(RedisURI server, long limit, Duration window, boolean batching) {
		RedisClient client = RedisClient.create(server);
		LettuceBasedProxyManager<byte[]> proxyManager = Bucket4jLettuce.casBasedBuilder(client)
			.expirationAfterWrite(ExpirationAfterWriteStrategy.basedOnTimeForRefillingBucketUpToMax(Duration.ofSeconds(10)))
			.build();
		BucketConfiguration configuration = BucketConfiguration.builder()
			.addLimit((bandwidth) -> bandwidth.capacity(limit).refillGreedy(limit, window))
			.build();
		String prefix = "bench-bucket4j-" + UUID.randomUUID() + ":";
		RemoteBucketBuilder<byte[]> builder = proxyManager.builder();
		if (batching) {
			builder = builder.withOptimization(Optimizations.batching());
		}
		RemoteBucketBuilder<byte[]> buckets = builder;
		ConcurrentHashMap<String, BucketProxy> proxies = new ConcurrentHashMap<>();
		return new Limiter() {

			@Override
			public boolean tryAcquire(String key) {
				BucketProxy bucket = proxies.get(key);
				if (bucket == null) {
					bucket = proxies.computeIfAbsent(key,
							(k) -> buckets.build((prefix + k).getBytes(StandardCharsets.UTF_8), () -> configuration));
				}
				return bucket.tryConsume(1);
			}

			@Override
			public void close() {
				client.shutdown();
			}

		};
	}

	/**
	 * The floor's script: {@code return 1}, or the file {@code -Dbench.floorScriptFile} names, to see how the
	 * floor's throughput moves with the time Redis spends in a script.
	 */
	private static byte[] floorScript() {
		String file = System.getProperty("bench.floorScriptFile");
		if (file == null) {
			return "return 1".getBytes(StandardCharsets.UTF_8);
		}
		try {
			return Files.readAllBytes(Path.of(file));
		}
		catch (IOException ex) {
			throw new UncheckedIOException(ex);
		}
	}

	private static Limiter floor(RedisURI server) {
		LettuceConnectionFactory factory = connectionFactory(server);
		LettuceConnection connection = (LettuceConnection) factory.getConnection();
		RedisClusterAsyncCommands<byte[], byte[]> commands = connection.getNativeConnection();
		byte[] script = floorScript();
		String sha;
		try {
			sha = commands.scriptLoad(script).get();
		}
		catch (InterruptedException | ExecutionException ex) {
			throw new IllegalStateException(ex);
		}
		byte[][] noKeys = new byte[0][];
		return new Limiter() {

			@Override
			public boolean tryAcquire(String key) {
				try {
					Long result = commands.<Long>evalsha(sha, ScriptOutputType.INTEGER, noKeys).get();
					return result == 1L;
				}
				catch (InterruptedException | ExecutionException ex) {
					throw new IllegalStateException(ex);
				}
			}

			@Override
			public void close() {
				connection.close();
				factory.destroy();
			}

		};
	}

}
