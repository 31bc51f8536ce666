package io.github.ratelimit.dynamodb;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Supplier;

import io.github.ratelimit.Decision;
import io.github.ratelimit.RateLimitPolicy;
import io.github.ratelimit.limiter.RateLimiter;
import io.github.ratelimit.store.ResetListener;
import io.github.ratelimit.test.Dynalite;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import software.amazon.awssdk.services.dynamodb.DynamoDbClient;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * A reset or clear through one instance reaches the deny caches of the others sharing the table and key prefix,
 * through the reset generation each instance reads (issue 39), against dynalite.
 */
class DynamoDbResetPropagationTests {

	private static final Duration POLL = Duration.ofMillis(100);

	private static Dynalite dynalite;

	private static DynamoDbClient client;

	private static String table;

	private static int prefixes;

	private final List<DynamoDbRateLimitStore> stores = new ArrayList<>();

	private final String prefix = "resets" + (++prefixes);

	@BeforeAll
	static void startDynalite() {
		assumeTrue(Dynalite.isAvailable(), "node is not installed");
		dynalite = Dynalite.start();
		client = DynamoDbClients.client(dynalite.endpoint());
		table = DynamoDbClients.newTable();
		DynamoDbRateLimitStore.builder(client).table(table).createTable(true).build().start();
	}

	@AfterAll
	static void stopDynalite() {
		if (client != null) {
			client.close();
		}
		if (dynalite != null) {
			dynalite.close();
		}
	}

	@AfterEach
	void closeStores() {
		this.stores.forEach(DynamoDbRateLimitStore::close);
	}

	@Test
	void aResetThroughOneInstanceReachesTheDenialsAnotherInstanceCached() throws InterruptedException {
		RateLimitPolicy policy = policy("reset");
		DynamoDbRateLimitStore storeA = store();
		DynamoDbRateLimitStore storeB = store();
		RateLimiter a = RateLimiter.of(storeA);
		RateLimiter b = RateLimiter.of(storeB);
		denyThroughB(b, policy, "blocked");
		denyThroughB(b, policy, "other");
		awaitFirstRead(storeA);
		awaitFirstRead(storeB);
		a.reset(policy, "blocked");
		Decision decision = await(() -> b.tryAcquire(policy, "blocked"));
		assertThat(decision.allowed()).isTrue();
		assertThat(decision.origin()).isEqualTo(Decision.Origin.STORE);
		assertThat(b.tryAcquire(policy, "other").origin()).as("another key keeps its denial")
			.isEqualTo(Decision.Origin.DENY_CACHE);
	}

	@Test
	void aClearThroughOneInstanceMakesAnotherForgetItsDenials() throws InterruptedException {
		RateLimitPolicy policy = policy("clear");
		DynamoDbRateLimitStore storeA = store();
		DynamoDbRateLimitStore storeB = store();
		RateLimiter a = RateLimiter.of(storeA);
		RateLimiter b = RateLimiter.of(storeB);
		denyThroughB(b, policy, "first");
		denyThroughB(b, policy, "second");
		awaitFirstRead(storeB);
		a.clear();
		for (String key : new String[] { "first", "second" }) {
			Decision decision = await(() -> b.tryAcquire(policy, key));
			assertThat(decision.allowed()).as(key).isTrue();
			assertThat(decision.origin()).isEqualTo(Decision.Origin.STORE);
		}
	}

	@Test
	void oneResetIsToldAsItselfAndSeveralBetweenTwoReadsAsAClear() throws InterruptedException {
		RateLimitPolicy policy = RateLimitPolicy.builder("odd:name%").variant("t#1").limit(2)
			.window(Duration.ofMinutes(1)).build();
		DynamoDbRateLimitStore writer = store();
		DynamoDbRateLimitStore reader = DynamoDbRateLimitStore.builder(client).table(table).keyPrefix(this.prefix)
			.timeout(Duration.ofSeconds(5)).resetPollInterval(Duration.ofMillis(300)).build();
		this.stores.add(reader);
		List<String> heard = new java.util.concurrent.CopyOnWriteArrayList<>();
		reader.addResetListener(new ResetListener() {

			@Override
			public void onReset(String name, String variant, String key) {
				heard.add(name + "|" + variant + "|" + key);
			}

			@Override
			public void onClear() {
				heard.add("clear");
			}

		});
		awaitFirstRead(reader);
		String key = "a:b%c#\uD800";
		writer.reset(policy, key);
		awaitHeard(heard, 1);
		assertThat(heard).containsExactly("odd:name%|t#1|" + key);
		long seen = reader.resetGenerationSeen();
		writer.reset(policy, "x");
		writer.reset(policy, "y");
		long deadline = System.nanoTime() + Duration.ofSeconds(5).toNanos();
		while (reader.resetGenerationSeen() != seen + 2 && System.nanoTime() < deadline) {
			Thread.sleep(10);
		}
		assertThat(reader.resetGenerationSeen()).isEqualTo(seen + 2);
		// Both within one read (they are 300 ms apart), or one per read: either way each is forgotten.
		assertThat(List.copyOf(heard.subList(1, heard.size()))).isIn(List.of("clear"),
				List.of("odd:name%|t#1|x", "odd:name%|t#1|y"));
	}

	@Test
	void closingIsIdempotentAndStopsReading() throws InterruptedException {
		DynamoDbRateLimitStore store = store();
		store.addResetListener(new ResetListener() {

			@Override
			public void onReset(String policy, String variant, String key) {
			}

			@Override
			public void onClear() {
			}

		});
		awaitFirstRead(store);
		assertThat(pollers()).isEqualTo(1);
		store.close();
		store.close();
		long deadline = System.nanoTime() + Duration.ofSeconds(5).toNanos();
		while (pollers() > 0 && System.nanoTime() < deadline) {
			Thread.sleep(10);
		}
		assertThat(pollers()).isZero();
	}

	private long pollers() {
		String name = "ratelimit-dynamodb-resets-" + this.prefix + "#resets";
		return Thread.getAllStackTraces().keySet().stream()
			.filter((thread) -> thread.getName().equals(name) && thread.isAlive())
			.count();
	}

	@Test
	void anEncodedResetComesBackAsItWas() {
		String[][] cases = { { "p", "", "k" }, { "a:b", "c:d", "e:f" }, { "%25", "%u", "\uDC00x\uD800" },
				{ "", "", "" }, { "n", "v", "\u0000sha256:abc" } };
		for (String[] reset : cases) {
			assertThat(DynamoDbResets.decode(DynamoDbResets.encode(reset[0], reset[1], reset[2]))).containsExactly(reset);
		}
		assertThat(DynamoDbResets.decode("")).isNull();
		assertThat(DynamoDbResets.decode("a:b")).isNull();
		assertThat(DynamoDbResets.decode("a:b:%Z1")).isNull();
	}

	/** Exhaust the key through b until b's deny cache answers for it without asking DynamoDB. */
	private static void denyThroughB(RateLimiter b, RateLimitPolicy policy, String key) {
		b.tryAcquire(policy, key);
		b.tryAcquire(policy, key);
		Decision rejected = b.tryAcquire(policy, key);
		assertThat(rejected.allowed()).isFalse();
		assertThat(rejected.origin()).isEqualTo(Decision.Origin.STORE);
		Decision cached = b.tryAcquire(policy, key);
		assertThat(cached.allowed()).isFalse();
		assertThat(cached.origin()).as("cached").isEqualTo(Decision.Origin.DENY_CACHE);
	}

	/** Ask until admitted, for a few seconds: many poll intervals, generous for a loaded machine. */
	private static Decision await(Supplier<Decision> decide) throws InterruptedException {
		long deadline = System.nanoTime() + Duration.ofSeconds(5).toNanos();
		Decision decision = decide.get();
		while (!decision.allowed() && System.nanoTime() < deadline) {
			Thread.sleep(20);
			decision = decide.get();
		}
		return decision;
	}

	/** Wait for the store's first read of the reset generation, its baseline. */
	private static void awaitFirstRead(DynamoDbRateLimitStore store) throws InterruptedException {
		long deadline = System.nanoTime() + Duration.ofSeconds(5).toNanos();
		while (store.resetGenerationSeen() < 0 && System.nanoTime() < deadline) {
			Thread.sleep(10);
		}
		assertThat(store.resetGenerationSeen()).isGreaterThanOrEqualTo(0);
	}

	private static void awaitHeard(List<String> heard, int size) throws InterruptedException {
		long deadline = System.nanoTime() + Duration.ofSeconds(5).toNanos();
		while (heard.size() < size && System.nanoTime() < deadline) {
			Thread.sleep(10);
		}
		assertThat(heard).hasSizeGreaterThanOrEqualTo(size);
	}

	private DynamoDbRateLimitStore store() {
		DynamoDbRateLimitStore store = DynamoDbRateLimitStore.builder(client).table(table).keyPrefix(this.prefix)
			.timeout(Duration.ofSeconds(5)).resetPollInterval(POLL).build();
		this.stores.add(store);
		return store;
	}

	private static RateLimitPolicy policy(String name) {
		return RateLimitPolicy.builder(name).limit(2).window(Duration.ofMinutes(1)).build();
	}

}
