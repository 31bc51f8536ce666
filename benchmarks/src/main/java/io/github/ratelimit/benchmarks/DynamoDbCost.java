package io.github.ratelimit.benchmarks;

import java.net.URI;
import java.time.Duration;
import java.util.Arrays;
import java.util.concurrent.atomic.AtomicLong;

import io.github.ratelimit.Algorithm;
import io.github.ratelimit.RateLimitPolicy;
import io.github.ratelimit.dynamodb.DynamoDbRateLimitStore;
import io.github.ratelimit.limiter.RateLimiter;
import io.github.ratelimit.test.Dynalite;
import software.amazon.awssdk.auth.credentials.AwsBasicCredentials;
import software.amazon.awssdk.auth.credentials.StaticCredentialsProvider;
import software.amazon.awssdk.core.interceptor.Context;
import software.amazon.awssdk.core.interceptor.ExecutionAttributes;
import software.amazon.awssdk.core.interceptor.ExecutionInterceptor;
import software.amazon.awssdk.regions.Region;
import software.amazon.awssdk.services.dynamodb.DynamoDbClient;
import software.amazon.awssdk.services.dynamodb.model.GetItemRequest;
import software.amazon.awssdk.services.dynamodb.model.UpdateItemRequest;

/**
 * What the DynamoDB store costs, for {@code docs/stores.md}: per algorithm, the calls (billed write and read units)
 * per 100 requests of a client hammering past a limit of 10, with and without the deny cache, and the latency of one
 * decision (p50, p99) on keys that pass, against a local dynalite (which it starts) or the endpoint in
 * {@code RATELIMIT_BENCH_DYNAMODB} (with the SDK's credentials and region):
 * {@code java -cp benchmarks/target/benchmarks.jar io.github.ratelimit.benchmarks.DynamoDbCost}.
 */
public final class DynamoDbCost {

	private static final int LATENCY_SAMPLES = 2_000;

	private DynamoDbCost() {
	}

	public static void main(String[] args) {
		String external = System.getenv("RATELIMIT_BENCH_DYNAMODB");
		Dynalite dynalite = (external == null) ? Dynalite.start() : null;
		URI endpoint = (dynalite != null) ? dynalite.endpoint() : URI.create(external);
		Calls calls = new Calls();
		try (DynamoDbClient client = client(endpoint, calls, dynalite != null)) {
			String table = "rate-limits-bench-" + System.nanoTime();
			DynamoDbRateLimitStore store = DynamoDbRateLimitStore.builder(client).table(table).createTable(true).build();
			store.start();
			System.out.println("DynamoDB store against " + ((dynalite != null) ? "dynalite 4.0.0 (local)" : endpoint));
			for (Algorithm algorithm : new Algorithm[] { Algorithm.FIXED, Algorithm.SLIDING_COUNTER,
					Algorithm.TOKEN_BUCKET }) {
				for (boolean denyCache : new boolean[] { false, true }) {
					RateLimiter limiter = RateLimiter.builder(store).denyCache(denyCache).build();
					RateLimitPolicy policy = RateLimitPolicy.builder("hammer-" + algorithm + "-" + denyCache)
						.algorithm(algorithm)
						.limit(10)
						.window(Duration.ofHours(1))
						.build();
					calls.reset();
					for (int i = 0; i < 100; i++) {
						limiter.tryAcquire(policy, "client");
					}
					System.out.printf("  %-15s deny cache %-5s: %3d writes, %3d reads per 100 requests%n", algorithm,
							denyCache, calls.writes.get(), calls.reads.get());
				}
				RateLimitPolicy open = RateLimitPolicy.builder("latency-" + algorithm)
					.algorithm(algorithm)
					.limit(1_000_000)
					.window(Duration.ofHours(1))
					.build();
				for (int i = 0; i < 200; i++) {
					store.tryAcquire(open, "warm-" + (i % 50), 1);
				}
				long[] micros = new long[LATENCY_SAMPLES];
				for (int i = 0; i < LATENCY_SAMPLES; i++) {
					long start = System.nanoTime();
					store.tryAcquire(open, "key-" + (i % 100), 1);
					micros[i] = (System.nanoTime() - start) / 1_000;
				}
				Arrays.sort(micros);
				System.out.printf("  %-15s latency per admitted decision: p50 %.2f ms, p99 %.2f ms%n", algorithm,
						micros[LATENCY_SAMPLES / 2] / 1000.0, micros[LATENCY_SAMPLES * 99 / 100] / 1000.0);
			}
		}
		finally {
			if (dynalite != null) {
				dynalite.close();
			}
		}
	}

	private static DynamoDbClient client(URI endpoint, Calls calls, boolean local) {
		var builder = DynamoDbClient.builder()
			.endpointOverride(endpoint)
			.overrideConfiguration((o) -> o.addExecutionInterceptor(calls));
		if (local) {
			builder.region(Region.US_EAST_1)
				.credentialsProvider(StaticCredentialsProvider.create(AwsBasicCredentials.create("bench", "bench")));
		}
		return builder.build();
	}

	/** Counts calls by kind. */
	static final class Calls implements ExecutionInterceptor {

		final AtomicLong writes = new AtomicLong();

		final AtomicLong reads = new AtomicLong();

		@Override
		public void beforeExecution(Context.BeforeExecution context, ExecutionAttributes executionAttributes) {
			if (context.request() instanceof UpdateItemRequest) {
				this.writes.incrementAndGet();
			}
			else if (context.request() instanceof GetItemRequest) {
				this.reads.incrementAndGet();
			}
		}

		void reset() {
			this.writes.set(0);
			this.reads.set(0);
		}

	}

}
