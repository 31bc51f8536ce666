package io.github.ratelimit.redis;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;

import io.github.ratelimit.Algorithm;
import io.github.ratelimit.Decision;
import io.github.ratelimit.RateLimitPolicy;
import io.github.ratelimit.limiter.RateLimiter;
import io.github.ratelimit.conformance.MutableTimeSource;
import io.github.ratelimit.store.Acquisition;
import io.github.ratelimit.store.Reservation;
import io.github.ratelimit.test.RedisServer;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;
import org.junit.jupiter.params.provider.ValueSource;

import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * What only the Redis store does: one script call per decision, recovery from a flushed script cache, keys that
 * expire by themselves, Redis time, and what the deny cache saves.
 */
class RedisRateLimitStoreIntegrationTests {

	private static RedisServer redis;

	private static LettuceConnectionFactory connectionFactory;

	private String prefix;

	private RedisRateLimitStore store;

	@BeforeAll
	static void startRedis() {
		redis = RedisServer.start();
		connectionFactory = RedisConnections.standalone(redis);
	}

	@AfterAll
	static void stopRedis() {
		connectionFactory.destroy();
		redis.close();
	}

	@BeforeEach
	void createStore() {
		this.prefix = "it-" + UUID.randomUUID();
		this.store = RedisRateLimitStore.builder(connectionFactory)
			.keyPrefix(this.prefix)
			.timeout(Duration.ofSeconds(10))
			.build();
	}

	@AfterEach
	void closeStore() {
		this.store.close();
	}

	@Test
	void clearDeletesTheCountersUnderThePrefixAndNothingElse() {
		redis.call("SET", "application:data", "kept");
		redis.call("SET", this.prefix + "-sibling:data", "kept");
		redis.call("SET", this.prefix + ":session", "kept");
		// A store whose prefix starts with this one's.
		redis.call("SET", this.prefix + ":tenant-b:{p:k}:fx:1/1000", "kept");
		RateLimitPolicy policy = policy(Algorithm.SLIDING_LOG, 1, Duration.ofHours(1));
		for (int i = 0; i < 1_200; i++) {
			this.store.tryAcquire(policy, "client-" + i, 1);
		}
		this.store.clear();
		assertThat(this.store.tryAcquire(policy, "client-7", 1).allowed()).isTrue();
		assertThat(redis.call("GET", "application:data")).isEqualTo("kept");
		assertThat(redis.call("GET", this.prefix + "-sibling:data")).isEqualTo("kept");
		assertThat(redis.call("GET", this.prefix + ":session")).isEqualTo("kept");
		assertThat(redis.call("GET", this.prefix + ":tenant-b:{p:k}:fx:1/1000")).isEqualTo("kept");
		assertThat(redis.commandCalls("flushdb") + redis.commandCalls("flushall") + redis.commandCalls("keys")).isZero();
	}

	@ParameterizedTest
	@EnumSource(Algorithm.class)
	void everyDecisionIsExactlyOneScriptCall(Algorithm algorithm) {
		RateLimitPolicy policy = policy(algorithm, 5, Duration.ofHours(1));
		this.store.tryAcquire(policy, "warm-up", 1); // loads the script once
		redis.resetStats();
		for (int i = 0; i < 20; i++) {
			this.store.tryAcquire(policy, "key-" + (i % 3), 1);
		}
		assertThat(scriptCalls()).isEqualTo(20);
		// Commands run inside the script count in commandstats too; these would be separate round trips.
		assertThat(redis.commandCalls("script|load") + redis.commandCalls("watch") + redis.commandCalls("multi"))
			.as("no other round trips")
			.isZero();
	}

	/**
	 * The round trips a decision really costs, as Redis counts them: the first decision of a policy on an instance
	 * waits for the instance to say which parameter set it decides with (a second script call), and so does the first
	 * after the policy was idle for half the time a set stays live; otherwise one script call, with the set said
	 * again alongside a decision about once a second, not waited for.
	 */
	@Test
	void aDecisionIsOneScriptCallAndTheFirstOfAPolicyOrAfterAnIdleSpellTwo() {
		MutableTimeSource clock = MutableTimeSource.at("2030-01-01T00:00:00Z");
		try (RedisRateLimitStore store = RedisRateLimitStore.builder(connectionFactory).keyPrefix(this.prefix)
			.clock(clock).build()) {
			store.tryAcquire(policy(Algorithm.FIXED, 1_000, Duration.ofHours(1)).toBuilder().variant("warm").build(),
					"k", 1); // loads the scripts
			RateLimitPolicy policy = RateLimitPolicy.builder("first-" + UUID.randomUUID()).limit(1_000)
				.window(Duration.ofHours(1)).build();
			redis.resetStats();
			store.tryAcquire(policy, "k", 1);
			assertThat(roundTrips()).as("the first decision of a policy").isEqualTo(2);
			for (int i = 0; i < 10; i++) {
				clock.advanceMillis(50);
				store.tryAcquire(policy, "k", 1);
			}
			assertThat(roundTrips()).as("ten more within a second").isEqualTo(12);
			clock.advanceMillis(PolicyVersions.LIVE_MILLIS / 2);
			store.tryAcquire(policy, "k", 1);
			assertThat(roundTrips()).as("the first after an idle spell").isEqualTo(14);
		}
	}

	@ParameterizedTest
	@EnumSource(Algorithm.class)
	void aFlushedScriptCacheIsRecoveredWithEvalAndDecidesTheSame(Algorithm algorithm) {
		RateLimitPolicy policy = policy(algorithm, 3, Duration.ofHours(1));
		assertThat(this.store.tryAcquire(policy, "k", 2).remaining()).isEqualTo(1);
		redis.call("SCRIPT", "FLUSH");
		assertThat(this.store.tryAcquire(policy, "k", 1).remaining()).isZero();
		assertThat(this.store.tryAcquire(policy, "k", 1).allowed()).isFalse();
	}

	@ParameterizedTest
	@EnumSource(Algorithm.class)
	void keysShareOneHashTagAndExpireWithTheirState(Algorithm algorithm) {
		RateLimitPolicy policy = policy(algorithm, 3, Duration.ofMillis(300));
		this.store.tryAcquire(policy, "user-1", 1);
		List<String> keys = keys();
		assertThat(keys).isNotEmpty()
			.allSatisfy((key) -> assertThat(key).startsWith(this.prefix + ":{" + policy.name() + ":user-1}:"));
		// Only a fixed window's state is exactly as long-lived as its window. The sliding counter weighs a window
		// during the next one; the others push their expiry a window (a refill) ahead, so that a busy key does not
		// rewrite it on every request.
		long longest = (algorithm == Algorithm.FIXED) ? 300 : 600;
		for (String key : keys) {
			long ttl = (Long) redis.call("PTTL", key);
			// -2 or 0: gone already or going, since a fixed window is aligned to the epoch and may end a millisecond
			// after it began; -1 (no expiry) is what must never happen.
			if (ttl != -2) {
				assertThat(ttl).as(key).isBetween(0L, longest);
			}
		}
		awaitNoKeys();
		long versionsTtl = (Long) redis.call("PTTL", this.prefix + ":{" + policy.name() + "}:versions");
		assertThat(versionsTtl).isBetween(0L, PolicyVersions.LIVE_MILLIS);
	}

	@Test
	void rejectionsOfAHammeringClientStopReachingRedis() {
		RateLimitPolicy policy = policy(Algorithm.FIXED, 5, Duration.ofHours(1));
		MutableTimeSource clock = MutableTimeSource.at("2030-01-01T00:00:00Z");
		RateLimiter limiter = RateLimiter.builder(this.store).clock(clock).build();
		for (int i = 0; i < 5; i++) {
			assertThat(limiter.tryAcquire(policy, "hammer").allowed()).isTrue();
		}
		redis.resetStats();
		Decision first = limiter.tryAcquire(policy, "hammer");
		assertThat(first.allowed()).isFalse();
		assertThat(first.origin()).isEqualTo(Decision.Origin.STORE);
		List<Decision> local = new ArrayList<>();
		for (int i = 0; i < 1000; i++) {
			clock.advanceMillis(1);
			local.add(limiter.tryAcquire(policy, "hammer"));
		}
		assertThat(scriptCalls()).as("one call for the first rejection, none after").isEqualTo(1);
		assertThat(local).allSatisfy((decision) -> {
			assertThat(decision.allowed()).isFalse();
			assertThat(decision.origin()).isEqualTo(Decision.Origin.DENY_CACHE);
			assertThat(decision.remaining()).isZero();
			assertThat(decision.limit()).isEqualTo(5);
		});
		// The retry delay counts down from the store's answer as the clock moves.
		assertThat(local.get(999).retryAfterMillis()).isEqualTo(first.retryAfterMillis() - 1000);
		assertThat(local.get(999).resetAfterMillis()).isEqualTo(first.resetAfterMillis() - 1000);
	}

	/**
	 * Leased blocks on a hot key: 1,000 admitted requests through two instances, one a millisecond, cost at most
	 * 1,000 / block script calls and a small constant, as Redis counts them (INFO commandstats), for each algorithm
	 * that leases. The limiters' and the scripts' clock moves with the requests, so a bucket's blocks live only as long
	 * as the bucket, refilling at 278 units a second, could not have refilled what was used: at 1,000 requests a second
	 * they still serve all but the first request on each instance and a few more (measured: 976 of 1,000 in 24 calls;
	 * the windows 980 in 20 to 22).
	 */
	@ParameterizedTest
	@EnumSource(value = Algorithm.class, names = { "SLIDING_LOG", "CONCURRENCY" }, mode = EnumSource.Mode.EXCLUDE)
	void aThousandRequestsAdmittedFromLeasedBlocksCostAThousandOverTheBlockScriptCalls(Algorithm algorithm) {
		RateLimitPolicy policy = policy(algorithm, 1_000_000, Duration.ofHours(1)).toBuilder().lease(50).build();
		MutableTimeSource clock = MutableTimeSource.at("2030-01-01T00:00:00Z");
		try (RedisRateLimitStore store = RedisRateLimitStore.builder(connectionFactory).keyPrefix(this.prefix)
			.clock(clock).timeout(Duration.ofSeconds(10)).build()) {
			RateLimiter first = RateLimiter.builder(store).clock(clock).build();
			RateLimiter second = RateLimiter.builder(store).clock(clock).build();
			redis.resetStats();
			List<Decision> decisions = new ArrayList<>();
			for (int i = 0; i < 1000; i++) {
				decisions.add(((i % 2 == 0) ? first : second).tryAcquire(policy, "hot"));
				clock.advanceMillis(1);
			}
			assertThat(decisions).allSatisfy((decision) -> assertThat(decision.allowed()).isTrue());
			// A bucket's first request on each instance asks for its own unit: a block from a full bucket would lapse.
			assertThat(decisions).filteredOn((decision) -> decision.origin() == Decision.Origin.LEASE)
				.hasSizeGreaterThanOrEqualTo(975);
			assertThat(scriptCalls()).as("script calls for 1,000 admitted requests with blocks of 50")
				.isLessThanOrEqualTo(1000 / 50 + 4);
		}
	}

	@Test
	void aSlidingLogNeverKeepsMoreEntriesThanItsLimitNeeds() {
		io.github.ratelimit.conformance.MutableTimeSource clock = io.github.ratelimit.conformance.MutableTimeSource
			.at("2030-01-01T00:00:00Z");
		RateLimitPolicy policy = policy(Algorithm.SLIDING_LOG, 5, Duration.ofSeconds(1));
		try (RedisRateLimitStore store = RedisRateLimitStore.builder(connectionFactory).keyPrefix(this.prefix)
			.clock(clock).timeout(Duration.ofSeconds(10)).build()) {
			String log = new String(new RedisKeys(this.prefix).keys(policy, "client")[0],
					java.nio.charset.StandardCharsets.UTF_8);
			// Admissions, rejections and costs over many windows: two list elements (time, cost) per entry.
			for (int i = 0; i < 300; i++) {
				store.tryAcquire(policy, "client", 1 + i % 3);
				assertThat((Long) redis.call("LLEN", log)).as("request %d", i).isLessThanOrEqualTo(2L * 5);
				clock.advance(Duration.ofMillis(37));
			}
		}
	}

	/**
	 * Review R4: 50 metered requests in flight reserve 100 each of 10,000 an hour; one settles at 10,000, a
	 * rejection then merges the oldest 49 entries (they must all leave before anything passes), and the other 49
	 * settle at 10,000. The merged entry takes their charges: the log holds all 500,000 units used (it held 24,800
	 * when a charge looked for its admission's own time only).
	 */
	@Test
	void aMergedLogEntryTakesTheChargesOfTheAdmissionsItHolds() {
		MutableTimeSource clock = MutableTimeSource.at("2030-01-01T00:00:00Z");
		RateLimitPolicy policy = policy(Algorithm.SLIDING_LOG, 10_000, Duration.ofHours(1));
		String log = new String(new RedisKeys(this.prefix).keys(policy, "k")[0], java.nio.charset.StandardCharsets.UTF_8);
		try (RedisRateLimitStore store = RedisRateLimitStore.builder(connectionFactory).keyPrefix(this.prefix)
			.clock(clock).timeout(Duration.ofSeconds(10)).build()) {
			long[] countedAt = new long[50];
			for (int i = 0; i < countedAt.length; i++) {
				Reservation admitted = store.tryAcquireAll(List.of(new Acquisition(policy, "k", 100)));
				assertThat(admitted.allowed()).isTrue();
				countedAt[i] = admitted.countedAt(0);
				clock.advanceMillis(1);
			}
			store.charge(new Acquisition(policy, "k", 9_900), countedAt[49]);
			assertThat(store.tryAcquire(policy, "k", 1).allowed()).isFalse();
			assertThat((Long) redis.call("LLEN", log)).as("the oldest 49 merged").isEqualTo(2L * 2);
			for (int i = 0; i < 49; i++) {
				store.charge(new Acquisition(policy, "k", 9_900), countedAt[i]);
			}
			assertThat(unitsIn(log)).isEqualTo(500_000);
		}
	}

	private static long unitsIn(String log) {
		@SuppressWarnings("unchecked")
		List<Object> entries = (List<Object>) redis.call("LRANGE", log, "0", "-1");
		long units = 0;
		for (int i = 1; i < entries.size(); i += 2) {
			units += Long.parseLong(entries.get(i).toString());
		}
		return units;
	}

	/**
	 * After a limit decrease the log still holds the larger limit's entries: the first rejection merges those that
	 * must all leave before anything passes, so later decisions read no more than the new limit needs, and every
	 * answer is the one the whole log would give.
	 */
	@ParameterizedTest
	@ValueSource(booleans = { false, true })
	void aLogALargerLimitLeftBehindShrinksToTheNewLimitsBoundWithTheSameAnswers(boolean allOrNothing) {
		io.github.ratelimit.conformance.MutableTimeSource clock = io.github.ratelimit.conformance.MutableTimeSource
			.at("2030-01-01T00:00:00Z");
		RateLimitPolicy larger = policy(Algorithm.SLIDING_LOG, 1_000, Duration.ofMinutes(1));
		RateLimitPolicy smaller = larger.toBuilder().limit(10).build();
		RateLimitPolicy other = policy(Algorithm.FIXED, 1_000_000, Duration.ofMinutes(1));
		String log = new String(new RedisKeys(this.prefix).keys(larger, "k")[0],
				java.nio.charset.StandardCharsets.UTF_8);
		try (RedisRateLimitStore store = RedisRateLimitStore.builder(connectionFactory).keyPrefix(this.prefix)
			.clock(clock).timeout(Duration.ofSeconds(10)).build()) {
			for (int i = 0; i < 1_000; i++) {
				assertThat(store.tryAcquire(larger, "k", 1).allowed()).isTrue();
				clock.advance(Duration.ofMillis(10));
			}
		}
		// A new configuration, once the old one's set is no longer live: entry i (at 10·i ms) leaves at
		// 60,000 + 10·i ms; 'now' is 21,000 ms.
		clock.advance(Duration.ofSeconds(11));
		try (RedisRateLimitStore store = RedisRateLimitStore.builder(connectionFactory).keyPrefix(this.prefix)
			.clock(clock).timeout(Duration.ofSeconds(10)).build()) {
			java.util.function.Supplier<Decision> take = () -> allOrNothing
					? store.tryAcquireAll(List.of(new Acquisition(smaller, "k", 1), new Acquisition(other, "k", 1)))
						.decisions().get(0)
					: store.tryAcquire(smaller, "k", 1);
			Decision first = take.get();
			assertThat(first.allowed()).isFalse();
			// 991 of the 1,000 must leave for one more to fit: the 991st leaves at 60,000 + 9,900 ms.
			assertThat(first.retryAfterMillis()).isEqualTo(60_000 + 9_900 - 21_000);
			assertThat((Long) redis.call("LLEN", log)).as("the 990 that must leave first are one entry")
				.isEqualTo(2L * 11);
			assertThat(take.get().retryAfterMillis()).isEqualTo(first.retryAfterMillis());
			clock.advance(Duration.ofMillis(first.retryAfterMillis() - 1));
			assertThat(take.get().allowed()).isFalse();
			clock.advance(Duration.ofMillis(1));
			assertThat(take.get().allowed()).isTrue();
			assertThat(take.get().allowed()).isFalse();
			assertThat(take.get().remaining()).isZero();
		}
	}

	/**
	 * The worst decision of the longest sliding log allowed: 10,000 entries, and a cost that only the whole log's
	 * leaving frees. Prints the time Redis spent on it (docs/algorithms.md records it).
	 */
	@Test
	void aDecisionOnTheLongestSlidingLogReadsAtMostItsTenThousandEntries() {
		io.github.ratelimit.conformance.MutableTimeSource clock = io.github.ratelimit.conformance.MutableTimeSource
			.at("2030-01-01T00:00:00Z");
		RateLimitPolicy policy = policy(Algorithm.SLIDING_LOG, 10_000, Duration.ofHours(1));
		try (RedisRateLimitStore store = RedisRateLimitStore.builder(connectionFactory).keyPrefix(this.prefix)
			.clock(clock).coalesce(false).timeout(Duration.ofSeconds(10)).build()) {
			for (int i = 0; i < 9_999; i++) {
				store.tryAcquire(policy, "full", 1);
				clock.advance(Duration.ofMillis(1));
			}
			String log = new String(new RedisKeys(this.prefix).keys(policy, "full")[0],
					java.nio.charset.StandardCharsets.UTF_8);
			assertThat((Long) redis.call("LLEN", log)).isEqualTo(2L * 9_999);
			redis.resetStats();
			Decision decision = store.tryAcquire(policy, "full", 10_000);
			assertThat(decision.allowed()).isFalse();
			assertThat(decision.retryAfterMillis()).isEqualTo(Duration.ofHours(1).toMillis() - 1);
			String stats = String.valueOf(redis.call("INFO", "commandstats"));
			String line = stats.lines().filter((l) -> l.startsWith("cmdstat_evalsha:")).findFirst().orElseThrow();
			System.out.println("Redis time for one decision on a 9,999-entry sliding log, walking it whole: "
					+ line.replaceAll(".*usec=(\\d+),.*", "$1") + " µs");
		}
	}

	@Test
	void aCoalescedCallOfALongSlidingLogCarriesNoMoreThanItsBoundOfEntries() {
		// Up to 5,000 entries a key: a call carries at most 10,000 / 5,000 = 2 decisions.
		RateLimitPolicy policy = policy(Algorithm.SLIDING_LOG, 5_000, Duration.ofHours(1));
		io.github.ratelimit.conformance.ConcurrentTestHarness.run(32, () -> {
			for (int i = 0; i < 20; i++) {
				this.store.tryAcquire(policy, "hot", 1);
			}
		});
		assertThat(this.store.decisions()).isEqualTo(640);
		assertThat(this.store.scriptCalls()).isGreaterThanOrEqualTo(320);
	}

	@Test
	void coalescedDecisionsOnAHotKeyStayExactAndTakeFewerScriptCalls() {
		RateLimitPolicy policy = policy(Algorithm.SLIDING_LOG, 1000, Duration.ofHours(1));
		java.util.concurrent.atomic.AtomicInteger admitted = new java.util.concurrent.atomic.AtomicInteger();
		io.github.ratelimit.conformance.ConcurrentTestHarness.run(32, () -> {
			for (int i = 0; i < 50; i++) {
				if (this.store.tryAcquire(policy, "hot", 1).allowed()) {
					admitted.incrementAndGet();
				}
			}
		});
		assertThat(admitted).hasValue(1000);
		assertThat(this.store.decisions()).isEqualTo(1600);
		assertThat(this.store.scriptCalls()).isLessThanOrEqualTo(1600);
	}

	@Test
	void aResetThroughOneInstanceReachesTheDenialsEveryOtherInstanceCached() throws InterruptedException {
		RateLimitPolicy policy = policy(Algorithm.FIXED, 2, Duration.ofHours(1));
		try (RedisRateLimitStore other = RedisRateLimitStore.builder(connectionFactory).keyPrefix(this.prefix)
			.timeout(Duration.ofSeconds(10)).build()) {
			RateLimiter here = RateLimiter.of(this.store);
			RateLimiter there = RateLimiter.of(other);
			here.tryAcquire(policy, "blocked");
			here.tryAcquire(policy, "blocked");
			assertThat(there.tryAcquire(policy, "blocked").allowed()).isFalse();
			long calls = scriptCalls();
			assertThat(there.tryAcquire(policy, "blocked").origin()).as("cached").isEqualTo(Decision.Origin.DENY_CACHE);
			assertThat(scriptCalls()).isEqualTo(calls);
			awaitSubscribers(this.prefix + ":resets", 2);
			here.reset(policy, "blocked");
			// Pub/sub delivers in a moment: the other instance forgets its denial and asks Redis again.
			long deadline = System.nanoTime() + Duration.ofSeconds(5).toNanos();
			Decision decision = there.tryAcquire(policy, "blocked");
			while (!decision.allowed() && System.nanoTime() < deadline) {
				Thread.sleep(20);
				decision = there.tryAcquire(policy, "blocked");
			}
			assertThat(decision.allowed()).isTrue();
			assertThat(decision.origin()).isEqualTo(Decision.Origin.STORE);
		}
	}

	/** Wait until the instances have subscribed to the channel (in the background, from their first decision). */
	static void awaitSubscribers(String channel, long count) throws InterruptedException {
		long deadline = System.nanoTime() + Duration.ofSeconds(10).toNanos();
		while (subscribers(channel) < count && System.nanoTime() < deadline) {
			Thread.sleep(20);
		}
		assertThat(subscribers(channel)).isEqualTo(count);
	}

	private static long subscribers(String channel) {
		List<?> reply = (List<?>) redis.call("PUBSUB", "NUMSUB", channel);
		return ((Number) reply.get(1)).longValue();
	}

	@Test
	void whatTheStoreKeepsForAPolicyNoDecisionUsedForTenMinutesIsDropped() {
		MutableTimeSource clock = MutableTimeSource.at("2030-01-01T00:00:00Z");
		try (RedisRateLimitStore store = RedisRateLimitStore.builder(connectionFactory).keyPrefix(this.prefix)
			.clock(clock).timeout(Duration.ofSeconds(10)).build()) {
			for (int tenant = 0; tenant < PolicyScripts.SWEEP_ABOVE_POLICIES; tenant++) {
				store.tryAcquire(RateLimitPolicy.builder("exports").variant("t" + tenant).limit(5)
					.window(Duration.ofMinutes(1)).build(), "t" + tenant, 1);
			}
			RateLimitPolicy busy = RateLimitPolicy.builder("busy").limit(1_000).window(Duration.ofHours(1)).build();
			clock.advanceMillis(PolicyScripts.IDLE_POLICY_MILLIS - 1_000);
			store.tryAcquire(busy, "k", 1);
			clock.advanceMillis(1_000);
			store.tryAcquire(RateLimitPolicy.builder("newcomer").limit(5).window(Duration.ofMinutes(1)).build(), "k", 1);
			assertThat(store.policies()).as("the busy policy and the newcomer").isEqualTo(2);
			// A dropped tenant comes back, with its count in Redis intact.
			assertThat(store.tryAcquire(RateLimitPolicy.builder("exports").variant("t7").limit(5)
				.window(Duration.ofMinutes(1)).build(), "t7", 1).remaining()).isEqualTo(4);
		}
	}

	@Test
	void resetMessagesCarryAnyKeyAsItWas() {
		for (String key : new String[] { "", "k", "\u0000:x", "\ud800", "a".repeat(300), "{tag}:%#" }) {
			byte[] message = ResetBroadcast.encode("orders", "pro", key);
			String[] fields = ResetBroadcast.decode(ResetBroadcast.text(message));
			assertThat(fields).containsExactly("orders", "pro", key);
		}
	}

	@Test
	void severalAdmittedAcquisitionsAreGivenBackInOneScriptCall() {
		List<Acquisition> acquisitions = List.of(
				new Acquisition(policy(Algorithm.FIXED, 5, Duration.ofHours(1)), "a", 2),
				new Acquisition(policy(Algorithm.SLIDING_LOG, 5, Duration.ofHours(1)), "b", 1),
				new Acquisition(policy(Algorithm.TOKEN_BUCKET, 5, Duration.ofHours(1)), "c", 3),
				new Acquisition(policy(Algorithm.SLIDING_COUNTER, 5, Duration.ofHours(1)), "d", 1));
		Reservation reservation = this.store.tryAcquireAll(acquisitions);
		assertThat(reservation.allowed()).isTrue();
		long[] countedAt = new long[acquisitions.size()];
		for (int i = 0; i < countedAt.length; i++) {
			countedAt[i] = reservation.countedAt(i);
		}
		long before = scriptCalls();
		this.store.refundAll(acquisitions, countedAt);
		assertThat(scriptCalls() - before).isEqualTo(1);
		for (Acquisition acquisition : acquisitions) {
			assertThat(this.store.tryAcquire(acquisition.policy(), acquisition.key(), 1).remaining())
				.as(acquisition.policy().algorithm().name())
				.isEqualTo(4);
		}
	}

	@Test
	void timeComesFromRedisSoStoresWithDifferentClocksShareWindows() {
		RateLimitPolicy policy = policy(Algorithm.FIXED, 4, Duration.ofDays(10000));
		try (RedisRateLimitStore other = RedisRateLimitStore.builder(connectionFactory).keyPrefix(this.prefix).build()) {
			assertThat(this.store.tryAcquire(policy, "k", 3).allowed()).isTrue();
			Decision fromOther = other.tryAcquire(policy, "k", 1);
			assertThat(fromOther.remaining()).isZero();
			assertThat(other.tryAcquire(policy, "k", 1).allowed()).isFalse();
		}
	}

	/**
	 * The decisions' script calls: every call but the one an instance makes about once a second per policy to say
	 * which parameters it decides with (the only script that runs {@code HSET}), which a slow machine may meet.
	 */
	/** The script calls the client sent, the registrations of parameter sets included. */
	private static long roundTrips() {
		return redis.commandCalls("evalsha") + redis.commandCalls("eval");
	}

	private static long scriptCalls() {
		return redis.commandCalls("evalsha") + redis.commandCalls("eval") - redis.commandCalls("hset");
	}

	/** The keys of counters under this test's prefix (not the lists of parameter sets, which live ten seconds). */
	private List<String> keys() {
		@SuppressWarnings("unchecked")
		List<String> keys = (List<String>) redis.call("KEYS", this.prefix + ":*");
		return keys.stream().filter((key) -> !key.endsWith(":versions")).toList();
	}

	private void awaitNoKeys() {
		long deadline = System.nanoTime() + Duration.ofSeconds(10).toNanos();
		while (!keys().isEmpty()) {
			assertThat(System.nanoTime()).as("keys still there: " + keys()).isLessThan(deadline);
			try {
				Thread.sleep(50);
			}
			catch (InterruptedException ex) {
				Thread.currentThread().interrupt();
				return;
			}
		}
	}

	private static RateLimitPolicy policy(Algorithm algorithm, long limit, Duration window) {
		return RateLimitPolicy.builder("p-" + algorithm.name().toLowerCase())
			.algorithm(algorithm)
			.limit(limit)
			.window(window)
			.build();
	}

}
