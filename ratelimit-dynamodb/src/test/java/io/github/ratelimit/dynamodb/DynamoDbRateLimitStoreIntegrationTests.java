package io.github.ratelimit.dynamodb;

import java.net.URI;
import java.time.Duration;
import java.time.Instant;
import java.time.LocalDate;
import java.time.ZoneId;
import java.util.HashSet;
import java.util.Map;
import java.util.Set;

import io.github.ratelimit.Algorithm;
import io.github.ratelimit.CalendarWindow;
import io.github.ratelimit.Decision;
import io.github.ratelimit.RateLimitPolicy;
import io.github.ratelimit.conformance.MutableTimeSource;
import io.github.ratelimit.store.RateLimitStoreException;
import io.github.ratelimit.store.SharedChanges;
import io.github.ratelimit.test.Dynalite;
import io.github.ratelimit.test.TcpProxy;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import software.amazon.awssdk.core.retry.RetryMode;
import software.amazon.awssdk.services.dynamodb.DynamoDbClient;
import software.amazon.awssdk.services.dynamodb.model.AttributeValue;
import software.amazon.awssdk.services.dynamodb.model.ReturnValue;
import software.amazon.awssdk.services.dynamodb.model.ScalarAttributeType;
import software.amazon.awssdk.services.dynamodb.model.UpdateItemRequest;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;
import static org.assertj.core.api.Assertions.assertThatIllegalStateException;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * The DynamoDB store against dynalite: the seed's write, exactness when responses are lost, failures, keys, tables.
 */
class DynamoDbRateLimitStoreIntegrationTests {

	private static Dynalite dynalite;

	private static DynamoDbClient plainClient;

	private static String table;

	private final RecordedRequests recorded = new RecordedRequests();

	private final MutableTimeSource clock = MutableTimeSource.at("2030-01-01T00:00:00Z");

	private DynamoDbClient client;

	private DynamoDbRateLimitStore store;

	@BeforeAll
	static void startDynalite() {
		assumeTrue(Dynalite.isAvailable(), "node is not installed");
		dynalite = Dynalite.start();
		plainClient = DynamoDbClients.client(dynalite.endpoint());
		table = DynamoDbClients.newTable();
		DynamoDbRateLimitStore.builder(plainClient).table(table).createTable(true).build().start();
	}

	@AfterAll
	static void stopDynalite() {
		if (plainClient != null) {
			plainClient.close();
		}
		if (dynalite != null) {
			dynalite.close();
		}
	}

	@BeforeEach
	void createStore() {
		this.client = recordingClient(dynalite.endpoint());
		this.store = store(this.client, this.clock);
	}

	@Test
	void changesMadeAtRunTimeAreKeptForEveryInstanceDroppedWhenEmptyAndSurviveAClear() {
		SharedChanges changes = this.store.sharedChanges();
		changes.put("orders", Map.of("limit", "8"));
		changes.put("odd:name{}", Map.of("window", "1h", "mode", "shadow"));
		assertThat(changes.readAll()).containsEntry("orders", Map.of("limit", "8"))
			.containsEntry("odd:name{}", Map.of("window", "1h", "mode", "shadow"));
		this.store.clear();
		changes.put("orders", Map.of());
		assertThat(changes.readAll()).doesNotContainKey("orders").containsKey("odd:name{}");
	}

	@Test
	void aFixedWindowDecisionIsOneUpdateItemWithTheSeedsAddAndSet() {
		RateLimitPolicy policy = policy(Algorithm.FIXED, 3);
		assertThat(this.store.tryAcquire(policy, "alice", 1).remaining()).isEqualTo(2);
		assertThat(this.recorded.all()).hasSize(1);
		UpdateItemRequest update = (UpdateItemRequest) this.recorded.all().get(0);
		assertThat(update.updateExpression()).isEqualTo("ADD #c :cost SET #t = :ttl");
		assertThat(update.expressionAttributeNames()).containsEntry("#c", "count").containsEntry("#t", "ttl");
		assertThat(update.returnValues()).isEqualTo(ReturnValue.UPDATED_NEW);
		assertThat(update.conditionExpression()).isEqualTo("attribute_not_exists(#c) OR #c <= :room");
		long ttl = Long.parseLong(update.expressionAttributeValues().get(":ttl").n());
		assertThat(ttl).as("TTL in epoch seconds, after the window's end").isGreaterThan(
				(this.clock.currentTimeMillis() / 1000) + 59);
	}

	@Test
	void aCalendarMonthsItemsExpireAtTheMonthsRealEndInItsZone() {
		ZoneId berlin = ZoneId.of("Europe/Berlin");
		this.clock.set(Instant.parse("2030-02-10T12:00:00Z").toEpochMilli());
		long march = LocalDate.of(2030, 3, 1).atStartOfDay(berlin).toEpochSecond();
		for (Algorithm algorithm : new Algorithm[] { Algorithm.FIXED, Algorithm.SLIDING_COUNTER }) {
			RateLimitPolicy policy = RateLimitPolicy.builder("calendar-" + algorithm)
				.algorithm(algorithm)
				.limit(100)
				.window(CalendarWindow.of(CalendarWindow.Period.MONTH, berlin))
				.build();
			this.recorded.clear();
			this.store.tryAcquire(policy, "dora", 1);
			UpdateItemRequest update = this.recorded.all()
				.stream()
				.filter(UpdateItemRequest.class::isInstance)
				.map(UpdateItemRequest.class::cast)
				.findFirst()
				.orElseThrow();
			long ttl = Long.parseLong(update.expressionAttributeValues().get(":ttl").n());
			// Past the end of the month (a sliding counter's: of the next one, which it still weighs in), with the
			// store's minute of slack for clocks that run behind.
			long end = (algorithm == Algorithm.FIXED) ? march
					: LocalDate.of(2030, 4, 1).atStartOfDay(berlin).toEpochSecond();
			assertThat(ttl).as(algorithm.name()).isEqualTo(end + 61);
		}
	}

	@Test
	void aRejectionIsOneCallAndTakesNothing() {
		RateLimitPolicy policy = policy(Algorithm.FIXED, 2);
		this.store.tryAcquire(policy, "bob", 1);
		this.store.tryAcquire(policy, "bob", 1);
		this.recorded.clear();
		for (int i = 0; i < 5; i++) {
			Decision rejected = this.store.tryAcquire(policy, "bob", 1);
			assertThat(rejected.allowed()).isFalse();
			assertThat(rejected.remaining()).isZero();
		}
		assertThat(this.recorded.all()).hasSize(5);
		assertThat(count(windowItem(policy, "bob"))).as("the count never exceeds the limit").isEqualTo(2);
	}

	@Test
	void aLostResponseIsNotRetriedSoTheRequestCountsOnce() {
		RateLimitPolicy policy = policy(Algorithm.FIXED, 10);
		try (TcpProxy proxy = TcpProxy.to("127.0.0.1", dynalite.port());
				DynamoDbClient retrying = DynamoDbClients.builder(URI.create("http://127.0.0.1:" + proxy.port()))
					.overrideConfiguration((o) -> o.retryStrategy(RetryMode.STANDARD))
					.build()) {
			DynamoDbRateLimitStore store = store(retrying, this.clock);
			proxy.dropNextResponses(1);
			assertThatThrownBy(() -> store.tryAcquire(policy, "carol", 1)).isInstanceOf(RateLimitStoreException.class)
				.hasMessageContaining("DynamoDB");
			assertThat(proxy.droppedResponses()).isEqualTo(1);
			assertThat(count(windowItem(policy, "carol"))).as("the write landed once, and was not sent again")
				.isEqualTo(1);
			// The same client's own calls are retried (its strategy is STANDARD): the hazard the store avoids.
			proxy.dropNextResponses(1);
			retrying.updateItem((request) -> request.tableName(table)
				.key(Map.of("pk", AttributeValue.fromS(windowItem(policy, "carol"))))
				.updateExpression("ADD #c :one")
				.expressionAttributeNames(Map.of("#c", "count"))
				.expressionAttributeValues(Map.of(":one", AttributeValue.fromN("1"))));
			assertThat(count(windowItem(policy, "carol"))).as("a retried ADD counts twice").isEqualTo(3);
		}
	}

	@Test
	void aServerThatHoldsTheConnectionFailsTheDecisionAtTheTimeout() {
		try (TcpProxy proxy = TcpProxy.to("127.0.0.1", dynalite.port());
				DynamoDbClient client = DynamoDbClients.client(URI.create("http://127.0.0.1:" + proxy.port()))) {
			DynamoDbRateLimitStore store = DynamoDbRateLimitStore.builder(client)
				.table(table)
				.clock(this.clock)
				.timeout(Duration.ofMillis(300))
				.build();
			proxy.hold(true);
			assertThatThrownBy(() -> store.tryAcquire(policy(Algorithm.TOKEN_BUCKET, 5), "dave", 1))
				.isInstanceOf(RateLimitStoreException.class)
				.hasMessageContaining("did not decide within 300ms");
			proxy.hold(false);
		}
	}

	@Test
	void aDeadEndpointFailsTheDecisionAsUnreachable() {
		int closedPort;
		try (TcpProxy proxy = TcpProxy.to("127.0.0.1", dynalite.port())) {
			closedPort = proxy.port();
		}
		try (DynamoDbClient client = DynamoDbClients.client(URI.create("http://127.0.0.1:" + closedPort))) {
			assertThatThrownBy(() -> store(client, this.clock).tryAcquire(policy(Algorithm.FIXED, 5), "erin", 1))
				.isInstanceOf(RateLimitStoreException.class)
				.hasMessageContaining("cannot be reached");
		}
	}

	@Test
	void slidingLogIsRefusedNamingTheStoreAndTheAlternative() {
		RateLimitPolicy policy = policy(Algorithm.SLIDING_LOG, 5);
		assertThatIllegalArgumentException().isThrownBy(() -> this.store.checkSupported(policy))
			.withMessageContaining("SLIDING_LOG is not supported by the DynamoDB store")
			.withMessageContaining("use SLIDING_COUNTER");
		for (Algorithm algorithm : Algorithm.values()) {
			if (algorithm != Algorithm.SLIDING_LOG) {
				this.store.checkSupported(policy(algorithm, 5));
			}
		}
	}

	@Test
	void aMissingTableFailsStartUnlessTheStoreMayCreateIt() {
		String missing = DynamoDbClients.newTable();
		assertThatIllegalStateException()
			.isThrownBy(() -> DynamoDbRateLimitStore.builder(plainClient).table(missing).build().start())
			.withMessageContaining("DynamoDB table '" + missing + "' does not exist")
			.withMessageContaining("ratelimit.dynamodb.create-table=true");
		DynamoDbRateLimitStore created = DynamoDbRateLimitStore.builder(plainClient)
			.table(missing)
			.createTable(true)
			.clock(this.clock)
			.build();
		created.start(); // dynalite does not implement UpdateTimeToLive: tolerated
		assertThat(created.tryAcquire(policy(Algorithm.FIXED, 1), "frank", 1).allowed()).isTrue();
		created.start(); // and a table that exists is used as it is
	}

	@Test
	void aTableWithAnotherKeyFailsStart() {
		String other = DynamoDbClients.newTable();
		plainClient.createTable((request) -> request.tableName(other)
			.keySchema((key) -> key.attributeName("id").keyType("HASH"))
			.attributeDefinitions((attribute) -> attribute.attributeName("id").attributeType(ScalarAttributeType.S))
			.billingMode("PAY_PER_REQUEST"));
		assertThatIllegalStateException()
			.isThrownBy(() -> DynamoDbRateLimitStore.builder(plainClient).table(other).build().start())
			.withMessageContaining("needs a partition key 'pk' of type S");
	}

	@Test
	void distinctKeysNeverShareACounter() {
		RateLimitPolicy policy = policy(Algorithm.FIXED, 1);
		String[] keys = { "a?b", "a\uD800b", "a\uDC00b", "x:y", "x%3Ay", "long-" + "k".repeat(400),
				"long-" + "k".repeat(401), "\u0000sha256:abc" };
		for (String key : keys) {
			assertThat(this.store.tryAcquire(policy, key, 1).allowed()).as(key).isTrue();
		}
	}

	@Test
	void clearDeletesTheItemsUnderThePrefixAndNothingElse() {
		plainClient.putItem((request) -> request.tableName(table)
			.item(Map.of("pk", AttributeValue.fromS("application:data"), "value", AttributeValue.fromS("kept"))));
		DynamoDbRateLimitStore first = DynamoDbRateLimitStore.builder(this.client).table(table).keyPrefix("first")
			.clock(this.clock).build();
		DynamoDbRateLimitStore second = DynamoDbRateLimitStore.builder(this.client).table(table).keyPrefix("second")
			.clock(this.clock).build();
		for (Algorithm algorithm : new Algorithm[] { Algorithm.FIXED, Algorithm.SLIDING_COUNTER, Algorithm.TOKEN_BUCKET }) {
			RateLimitPolicy policy = policy(algorithm, 1);
			first.tryAcquire(policy, "k", 1);
			second.tryAcquire(policy, "k", 1);
			first.clear();
			assertThat(first.tryAcquire(policy, "k", 1).allowed()).as(algorithm.name()).isTrue();
			assertThat(second.tryAcquire(policy, "k", 1).allowed()).as("another prefix keeps its counts").isFalse();
		}
		assertThat(plainClient.getItem((request) -> request.tableName(table)
			.key(Map.of("pk", AttributeValue.fromS("application:data")))).item()).containsKey("value");
	}

	@Test
	void keysSpreadOverCircuitBreakerGroups() {
		RateLimitPolicy policy = policy(Algorithm.FIXED, 1);
		Set<String> groups = new HashSet<>();
		for (int i = 0; i < 1_000; i++) {
			groups.add(this.store.partitionOf(policy, "user-" + i));
		}
		assertThat(this.store.isPartitioned()).isTrue();
		assertThat(groups).hasSize(DynamoDbRateLimitStore.KEY_GROUPS);
		assertThat(this.store.partitionOf(policy, "user-1")).isEqualTo(this.store.partitionOf(policy, "user-1"));
	}

	@Test
	void instancesWithSkewedClocksAdmitAtMostTheLimitPerWindowItem() {
		RateLimitPolicy policy = policy(Algorithm.FIXED, 5, Duration.ofSeconds(10));
		long skew = 300;
		MutableTimeSource behind = MutableTimeSource.atMillis(this.clock.currentTimeMillis() - skew);
		DynamoDbRateLimitStore ahead = store(this.client, this.clock);
		DynamoDbRateLimitStore late = store(this.client, behind);
		this.clock.alignTo(policy.window(), 9_000);
		behind.set(this.clock.currentTimeMillis() - skew);
		long[] admittedAt = new long[200];
		int admitted = 0;
		long realStart = this.clock.currentTimeMillis();
		for (int step = 0; step < 200; step++) {
			// Real time advances 50 ms a step; each instance sees it through its own clock.
			this.clock.set(realStart + step * 50L);
			behind.set(realStart + step * 50L - skew);
			DynamoDbRateLimitStore instance = (step % 2 == 0) ? ahead : late;
			if (instance.tryAcquire(policy, "skewed", 1).allowed()) {
				admittedAt[admitted++] = realStart + step * 50L;
			}
		}
		// Per aligned window of the ahead clock, 5; a window's item takes admissions over W + skew of real time.
		int most = 0;
		for (int i = 0; i < admitted; i++) {
			int inWindow = 0;
			for (int j = i; j < admitted && admittedAt[j] < admittedAt[i] + policy.windowMillis() - skew; j++) {
				inWindow++;
			}
			most = Math.max(most, inWindow);
		}
		assertThat(admitted).isGreaterThan(0);
		assertThat(most).as("admitted in any W - skew of real time").isLessThanOrEqualTo(2 * 5);
		for (long start = realStart - Math.floorMod(realStart, 10_000) - 10_000; start < realStart + 20_000;
				start += 10_000) {
			assertThat(count(windowItemAt(policy, "skewed", start))).isLessThanOrEqualTo(5);
		}
	}

	@Test
	void concurrentTakersOfAFastRefillingBucketNeverFailForContention() {
		// 2,000 per second with a burst of 50: the bucket refills by several tokens per round trip, so it is full
		// or nearly full at every read, the case where takers would conflict if each rewrote the state.
		RateLimitPolicy policy = RateLimitPolicy.builder("fast-bucket-" + (++policies))
			.algorithm(Algorithm.TOKEN_BUCKET)
			.limit(2_000)
			.window(Duration.ofSeconds(1))
			.burst(50L)
			.build();
		// Real time, so that it refills; a timeout generous for a loaded CI machine: only contention may fail here.
		Duration timeout = Duration.ofSeconds(20);
		DynamoDbRateLimitStore first = DynamoDbRateLimitStore.builder(this.client).table(table).timeout(timeout).build();
		DynamoDbRateLimitStore second = DynamoDbRateLimitStore.builder(plainClient).table(table).timeout(timeout).build();
		java.util.concurrent.atomic.AtomicInteger admitted = new java.util.concurrent.atomic.AtomicInteger();
		java.util.concurrent.atomic.AtomicInteger thread = new java.util.concurrent.atomic.AtomicInteger();
		io.github.ratelimit.conformance.ConcurrentTestHarness.run(32, () -> {
			DynamoDbRateLimitStore store = (thread.getAndIncrement() % 2 == 0) ? first : second;
			for (int i = 0; i < 20; i++) {
				if (store.tryAcquire(policy, "fast", 1).allowed()) {
					admitted.incrementAndGet();
				}
			}
		});
		assertThat(admitted.get()).as("every decision answered; at least the burst admitted").isGreaterThanOrEqualTo(50);
	}

	private DynamoDbRateLimitStore store(DynamoDbClient client, MutableTimeSource clock) {
		return DynamoDbRateLimitStore.builder(client).table(table).clock(clock).timeout(Duration.ofSeconds(5)).build();
	}

	private DynamoDbClient recordingClient(URI endpoint) {
		return DynamoDbClients.builder(endpoint)
			.overrideConfiguration((o) -> o.addExecutionInterceptor(this.recorded))
			.build();
	}

	private String windowItem(RateLimitPolicy policy, String key) {
		long now = this.clock.currentTimeMillis();
		return windowItemAt(policy, key, now - Math.floorMod(now, policy.windowMillis()));
	}

	private static String windowItemAt(RateLimitPolicy policy, String key, long start) {
		return new ItemKeys(DynamoDbRateLimitStore.DEFAULT_KEY_PREFIX).window(policy, key, start);
	}

	private static long count(String pk) {
		Map<String, AttributeValue> item = plainClient
			.getItem((request) -> request.tableName(table).key(Map.of("pk", AttributeValue.fromS(pk))).consistentRead(true))
			.item();
		return (item.containsKey("count")) ? Long.parseLong(item.get("count").n()) : 0;
	}

	private static int policies;

	private static RateLimitPolicy policy(Algorithm algorithm, long limit) {
		return policy(algorithm, limit, Duration.ofMinutes(1));
	}

	private static RateLimitPolicy policy(Algorithm algorithm, long limit, Duration window) {
		return RateLimitPolicy.builder("store-" + algorithm.name().toLowerCase() + "-" + (++policies))
			.algorithm(algorithm)
			.limit(limit)
			.window(window)
			.build();
	}

}
