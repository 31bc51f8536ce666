package io.github.ratelimit.redis;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.UUID;

import io.github.ratelimit.Algorithm;
import io.github.ratelimit.RateLimitPolicy;
import io.github.ratelimit.test.RedisServer;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The fixed window script's paths for a request alone in its call (one HINCRBY in a window already counted) and how
 * its state stays one field per key: the paths the batch and conformance tests reach only in part, since they keep
 * keys for an hour.
 */
class FixedWindowScriptIntegrationTests {

	private static final long WINDOW = Duration.ofMinutes(1).toMillis();

	/** A window start, far from Redis's own clock: expiries are relative, so keys live for their window's rest. */
	private static final long W1 = 1_900_000_020L * 1000 / WINDOW * WINDOW;

	private static final long W2 = W1 + WINDOW;

	private static RedisServer redis;

	private static LettuceConnectionFactory connectionFactory;

	private static LettuceScriptExecutor executor;

	private final RateLimitPolicy policy = RateLimitPolicy.builder("fixed-" + UUID.randomUUID())
		.algorithm(Algorithm.FIXED)
		.limit(3)
		.window(Duration.ofMillis(WINDOW))
		.build();

	private final byte[] key = new RedisKeys("script").layout(this.policy).keys("alice")[0];

	@BeforeAll
	static void startRedis() {
		redis = RedisServer.start();
		connectionFactory = RedisConnections.standalone(redis);
		executor = new LettuceScriptExecutor(connectionFactory);
	}

	@AfterAll
	static void stopRedis() {
		executor.close();
		connectionFactory.destroy();
		redis.close();
	}

	@BeforeEach
	void resetCommandCounts() {
		redis.resetStats();
	}

	@Test
	void aLoneAdmissionInAWindowAlreadyCountedCostsOneCommand() throws Exception {
		decide(W1 + 1_000, 0, 1);
		redis.resetStats();
		assertThat(decide(W1 + 2_000, 0, 1)).containsExactly(1L, 1L, WINDOW - 2_000, 0L, WINDOW - 2_000);
		Map<String, Long> calls = redis.commandCalls();
		assertThat(calls.getOrDefault("hincrby", 0L)).isEqualTo(1);
		assertThat(calls.keySet()).containsOnly("evalsha", "hincrby", "config|resetstat");
	}

	@Test
	void aLoneAdmissionOnAFreshKeyExpiresAtTheEndOfItsWindow() throws Exception {
		assertThat(decide(W1 + 400, 0, 2)).containsExactly(1L, 1L, WINDOW - 400, 0L, WINDOW - 400);
		assertThat(pttl(this.key)).isBetween(WINDOW - 400 - 10_000, WINDOW - 400);
		assertThat(fields()).containsExactly(field(W1), "2");
	}

	@Test
	void aLoneRejectionLeavesTheCountAsItWas() throws Exception {
		decide(W1 + 1_000, 0, 2);
		assertThat(decide(W1 + 1_500, 0, 2)).containsExactly(0L, 1L, WINDOW - 1_500, WINDOW - 1_500, WINDOW - 1_500);
		assertThat(fields()).containsExactly(field(W1), "2");
		assertThat(decide(W1 + 1_600, 0, 1)).containsExactly(1L, 0L, WINDOW - 1_600, 0L, WINDOW - 1_600);
	}

	@Test
	void aLoneRequestInALaterWindowRemovesTheEarlierWindowsCount() throws Exception {
		decide(W1 + 1_000, WINDOW * 60, 3);
		assertThat(decide(W2 + 1_000, WINDOW * 60, 1)).containsExactly(1L, 2L, WINDOW - 1_000, 0L, WINDOW - 1_000);
		assertThat(fields()).containsExactly(field(W2), "1");
		assertThat(pttl(this.key)).isBetween(1L, WINDOW * 60);
	}

	@Test
	void aLoneRequestOnAKeyAlreadyInALaterWindowIsDecidedInThatWindow() throws Exception {
		// A failover to a replica whose clock is a window behind: the key's time never runs backwards.
		decide(W2 + 1_000, 0, 3);
		assertThat(decide(W1 + 30_000, 0, 1)).containsExactly(0L, 0L, WINDOW, WINDOW, WINDOW);
		assertThat(fields()).containsExactly(field(W2), "3");
	}

	@Test
	void aRequestThatCanNeverPassReadsWithoutWriting() throws Exception {
		decide(W1 + 1_000, 0, 1);
		redis.resetStats();
		assertThat(decide(W1 + 2_000, 0, 4)).containsExactly(0L, 2L, WINDOW - 2_000, -1L, WINDOW - 2_000);
		assertThat(redis.commandCalls().keySet()).containsOnly("evalsha", "hgetall", "config|resetstat");
		assertThat(fields()).containsExactly(field(W1), "1");
	}

	@Test
	void aHotKeyIsReadAndWrittenOncePerCall() throws Exception {
		decide(W1 + 1_000, 0, 1);
		redis.resetStats();
		List<Object> answers = decide(W1 + 2_000, 0, 1, 1, 1);
		assertThat(answers).containsExactly(1L, 1L, WINDOW - 2_000, 0L, WINDOW - 2_000, 1L, 0L, WINDOW - 2_000, 0L,
				WINDOW - 2_000, 0L, 0L, WINDOW - 2_000, WINDOW - 2_000, WINDOW - 2_000);
		Map<String, Long> calls = redis.commandCalls();
		assertThat(calls).containsEntry("hgetall", 1L).containsEntry("hincrby", 1L);
		assertThat(fields()).containsExactly(field(W1), "3");
	}

	@Test
	void aLoneAdmissionOnAKeyAlreadyInALaterWindowCountsThereAndLeavesItsExpiry() throws Exception {
		decide(W2 + 1_000, 0, 1);
		long ttl = pttl(this.key);
		assertThat(decide(W1 + 30_000, 0, 1)).containsExactly(1L, 1L, WINDOW, 0L, WINDOW);
		assertThat(fields()).containsExactly(field(W2), "2");
		assertThat(pttl(this.key)).isBetween(1L, ttl);
	}

	@Test
	void aRunOfOneKeyOnAFreshKeyExpiresAtTheEndOfItsWindow() throws Exception {
		assertThat(decide(W1 + 400, 0, 1, 1)).containsExactly(1L, 2L, WINDOW - 400, 0L, WINDOW - 400, 1L, 1L,
				WINDOW - 400, 0L, WINDOW - 400);
		assertThat(pttl(this.key)).isBetween(WINDOW - 400 - 10_000, WINDOW - 400);
		assertThat(fields()).containsExactly(field(W1), "2");
	}

	@Test
	void aRunStartingWithARequestThatCanNeverPassStillAdmitsTheRestInANewWindow() throws Exception {
		decide(W1 + 1_000, WINDOW * 60, 3);
		assertThat(decide(W2 + 1_000, 0, 4, 1)).containsExactly(0L, 3L, WINDOW - 1_000, -1L, WINDOW - 1_000, 1L, 2L,
				WINDOW - 1_000, 0L, WINDOW - 1_000);
		assertThat(fields()).containsExactly(field(W2), "1");
		assertThat(pttl(this.key)).isBetween(WINDOW - 1_000 - 10_000, WINDOW - 1_000);
	}

	@Test
	void interleavedKeysInOneCallAreCountedApart() throws Exception {
		byte[] other = new RedisKeys("script").layout(this.policy).keys("bob")[0];
		List<Object> answers = decide(W1 + 1_000, 0, new byte[][] { this.key, other, this.key }, 2, 3, 2);
		assertThat(answers).containsExactly(1L, 1L, WINDOW - 1_000, 0L, WINDOW - 1_000, 1L, 0L, WINDOW - 1_000, 0L,
				WINDOW - 1_000, 0L, 1L, WINDOW - 1_000, WINDOW - 1_000, WINDOW - 1_000);
		assertThat(fields()).containsExactly(field(W1), "2");
		assertThat(redis.call("HGET", string(other), field(W1))).isEqualTo("3");
	}

	@Test
	void withoutAGivenTimeTheWindowIsRedissOwn() throws Exception {
		long before = redisMillis();
		List<Object> answers = executor.execute(RateLimitScript.of(Algorithm.FIXED), new byte[][] { this.key },
				args(new byte[0], 0, 1)).get();
		long after = redisMillis();
		assertThat(answers.get(0)).isEqualTo(1L);
		assertThat((Long) answers.get(2)).isBetween(1L, WINDOW);
		assertThat(fields()).hasSize(2);
		assertThat((String) fields().get(0)).isIn(field(before - before % WINDOW), field(after - after % WINDOW));
		assertThat(pttl(this.key)).isBetween(0L, WINDOW); // 0: the window ends within this millisecond
	}

	/** Decide requests of the key, one per cost, in one call at the given time. */
	private List<Object> decide(long now, long leastTtl, long... costs) throws Exception {
		byte[][] keys = new byte[costs.length][];
		Arrays.fill(keys, this.key);
		return decide(now, leastTtl, keys, costs);
	}

	/** Decide requests, one per key and cost, in one call at the given time. */
	private List<Object> decide(long now, long leastTtl, byte[][] keys, long... costs) throws Exception {
		return executor.execute(RateLimitScript.of(Algorithm.FIXED), keys, args(bytes(now), leastTtl, costs)).get();
	}

	private byte[][] args(byte[] now, long leastTtl, long... costs) {
		List<byte[]> args = new ArrayList<>(List.of(now, bytes(this.policy.limit()), bytes(this.policy.windowMillis()),
				bytes(this.policy.burst()), bytes(this.policy.unitsPerToken()), bytes(this.policy.unitsPerMilli()),
				bytes(leastTtl)));
		for (long cost : costs) {
			args.add(bytes(cost));
		}
		return args.toArray(new byte[0][]);
	}

	/** The name of a window's field: its start. */
	private static String field(long start) {
		return Long.toString(start);
	}

	private static long pttl(byte[] key) {
		return (Long) redis.call("PTTL", string(key));
	}

	private static long redisMillis() {
		@SuppressWarnings("unchecked")
		List<String> time = (List<String>) redis.call("TIME");
		return Long.parseLong(time.get(0)) * 1000 + Long.parseLong(time.get(1)) / 1000;
	}

	private List<Object> fields() {
		@SuppressWarnings("unchecked")
		List<Object> fields = (List<Object>) redis.call("HGETALL", string(this.key));
		return fields;
	}

	private static String string(byte[] bytes) {
		return new String(bytes, StandardCharsets.UTF_8);
	}

	private static byte[] bytes(long value) {
		return Long.toString(value).getBytes(StandardCharsets.US_ASCII);
	}

}
