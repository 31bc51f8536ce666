package io.github.ratelimit.benchmarks;

import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

import io.github.ratelimit.RateLimitPolicy;
import io.github.ratelimit.redis.RedisRateLimitStore;

import org.springframework.data.redis.connection.RedisClusterConfiguration;
import org.springframework.data.redis.connection.RedisConnectionFactory;
import org.springframework.data.redis.connection.RedisStandaloneConfiguration;
import org.springframework.data.redis.connection.jedis.JedisConnectionFactory;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;

/**
 * What the Redis store costs an application between requests, for {@code docs/benchmarks.md}: ten policies whose
 * keys have spread over every hash slot, then ten seconds with no request and ten seconds with a trickle (one request
 * every 10 ms, one key), measuring the CPU time of the store's timeout thread ({@code ratelimit-redis-timeouts-*})
 * and of the whole process.
 * <p>
 * {@code java -cp benchmarks/target/benchmarks.jar io.github.ratelimit.benchmarks.IdleCost jedis 127.0.0.1:6379}, or
 * {@code ... IdleCost cluster 127.0.0.1:7000,127.0.0.1:7001,127.0.0.1:7002}. It writes keys under a random prefix
 * that expire within a minute.
 */
public final class IdleCost {

	private static final int POLICIES = 10;

	/** Enough distinct keys per policy to reach nearly every one of the 16,384 hash slots. */
	private static final int KEYS_PER_POLICY = 60_000;

	private IdleCost() {
	}

	public static void main(String[] args) throws Exception {
		RedisConnectionFactory factory = connectionFactory(args[0], args[1]);
		String prefix = "idle-" + UUID.randomUUID().toString().substring(0, 8);
		RedisRateLimitStore store = RedisRateLimitStore.builder(factory)
			.keyPrefix(prefix)
			.timeout(Duration.ofMillis(200))
			.build();
		List<RateLimitPolicy> policies = new ArrayList<>();
		for (int p = 0; p < POLICIES; p++) {
			policies.add(RateLimitPolicy.builder("policy-" + p).limit(1_000).window(Duration.ofMinutes(1)).build());
		}
		try {
			spread(store, policies);
			Thread timeouts = timeoutThread(prefix);
			ThreadMXBean threads = ManagementFactory.getThreadMXBean();
			com.sun.management.OperatingSystemMXBean os = (com.sun.management.OperatingSystemMXBean) ManagementFactory
				.getOperatingSystemMXBean();
			for (boolean trickle : new boolean[] { false, true }) {
				long threadBefore = (timeouts != null) ? threads.getThreadCpuTime(timeouts.getId()) : 0;
				long processBefore = os.getProcessCpuTime();
				long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
				while (System.nanoTime() < end) {
					if (trickle) {
						store.tryAcquire(policies.get(0), "trickle", 1);
					}
					TimeUnit.MILLISECONDS.sleep(10);
				}
				long thread = (timeouts != null) ? threads.getThreadCpuTime(timeouts.getId()) - threadBefore : 0;
				long process = os.getProcessCpuTime() - processBefore;
				System.out.printf("%s %s: timeout thread %.1f ms CPU per second (%.1f%% of a core), process %.1f ms/s%n",
						args[0], trickle ? "trickle, 100 requests/s" : "no requests", thread / 1e7, thread / 1e8,
						process / 1e7);
			}
		}
		finally {
			store.close();
			if (factory instanceof LettuceConnectionFactory lettuce) {
				lettuce.destroy();
			}
			else if (factory instanceof JedisConnectionFactory jedis) {
				jedis.destroy();
			}
		}
	}

	/** Decide once for each of many keys of every policy, from 16 callers. */
	private static void spread(RedisRateLimitStore store, List<RateLimitPolicy> policies) throws Exception {
		ExecutorService callers = Executors.newFixedThreadPool(16);
		try {
			List<Future<?>> done = new ArrayList<>();
			for (int t = 0; t < 16; t++) {
				int first = t;
				done.add(callers.submit(() -> {
					for (RateLimitPolicy policy : policies) {
						for (int i = first; i < KEYS_PER_POLICY; i += 16) {
							try {
								store.tryAcquire(policy, "user-" + i, 1);
							}
							catch (RuntimeException ex) {
								// A slow first call (connecting, a cold JIT) only leaves one key out.
							}
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
	}

	private static Thread timeoutThread(String prefix) {
		return Thread.getAllStackTraces()
			.keySet()
			.stream()
			.filter((thread) -> thread.getName().equals("ratelimit-redis-timeouts-" + prefix))
			.findFirst()
			.orElse(null);
	}

	private static RedisConnectionFactory connectionFactory(String kind, String addresses) {
		String[] first = addresses.split(",")[0].split(":");
		return switch (kind) {
			case "jedis" -> {
				JedisConnectionFactory jedis = new JedisConnectionFactory(
						new RedisStandaloneConfiguration(first[0], Integer.parseInt(first[1])));
				jedis.afterPropertiesSet();
				jedis.start();
				yield jedis;
			}
			case "cluster" -> {
				LettuceConnectionFactory lettuce = new LettuceConnectionFactory(
						new RedisClusterConfiguration(Arrays.asList(addresses.split(","))));
				lettuce.afterPropertiesSet();
				lettuce.start();
				yield lettuce;
			}
			default -> throw new IllegalArgumentException("Unknown kind " + kind + ": jedis or cluster");
		};
	}

}
