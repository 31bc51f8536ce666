package io.github.ratelimit.engine;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.time.Duration;
import java.util.HexFormat;

import io.github.ratelimit.Algorithm;
import io.github.ratelimit.FailureMode;
import io.github.ratelimit.RateLimitPolicy;
import org.jspecify.annotations.Nullable;

/**
 * A policy's part in a penalty group: the group whose lock-outs its keys are checked against, and how long a key
 * that breaks the policy is locked out of the group (none for a policy that only checks).
 * <p>
 * A group's lock-outs are kept in the store as a token bucket per key, under a policy no declared one can be named
 * as ({@value #LOCK_PREFIX} and the group): {@value #RATE} units a second, as many at most. Each request checked
 * against the group takes one unit, in the same call as its own limits: a bucket no client can empty by its requests.
 * A lock-out takes nearly the whole bucket ({@link #LOCK_TAKE}: what is there unless a thousand checks came in the
 * last millisecond), then settles it to the bucket and what its refill brings in the penalty's time: the bucket is
 * in debt, and admits the key's next request once the penalty has passed. Two instances locking one key out at once
 * cannot both take nearly the whole bucket, so the penalty is not added twice. So a lock-out is two store calls, holds
 * on every store and every instance sharing it, and ends by itself; an operator's reset of the bucket ends it early.
 * <p>
 * Keys of the client's address (no key expression) share their lock-outs; a key expression's keys are locked out
 * apart, in a key space of that expression: a user named like an address, or like another expression's key, locks
 * out no one else.
 *
 * @param group the group's name
 * @param lockMillis how long a key that breaks the policy is locked out, or {@code 0} if the policy only checks
 * @param lock the policy the group's lock-outs are counted under
 * @param keySpace what the policy's keys are prefixed with in the group's bucket: empty for the client's address
 */
record Penalty(String group, long lockMillis, RateLimitPolicy lock, String keySpace) {

	/** What the names of the policies that count lock-outs start with: no declared policy may start so. */
	static final String LOCK_PREFIX = "#penalty:";

	/** The units the lock-out bucket refills a second, and holds at most. */
	static final long RATE = 1_000_000;

	/** The units the bucket refills a millisecond. */
	static final long PER_MILLI = RATE / 1000;

	/** What a lock-out takes first: the bucket, less a millisecond's refill. */
	static final long LOCK_TAKE = RATE - PER_MILLI;

	/** The longest penalty: longer is a ban, better kept in a deny list. */
	static final Duration MAX = Duration.ofDays(31);

	/**
	 * Create a policy's part in a group.
	 * @param group the group's name
	 * @param lockMillis how long a break locks a key out, or {@code 0}
	 * @param failureMode what the policy does when the store fails, for the group's checks too
	 * @param keyExpression the policy's key expression, empty for the client's address
	 * @return the penalty
	 */
	static Penalty of(String group, long lockMillis, FailureMode failureMode, String keyExpression) {
		return new Penalty(group, lockMillis, RateLimitPolicy.builder(LOCK_PREFIX + group)
			.algorithm(Algorithm.TOKEN_BUCKET)
			.limit(RATE)
			.window(Duration.ofSeconds(1))
			.burst(RATE)
			.failureMode(failureMode)
			.build(), keyExpression.isEmpty() ? "" : keySpaceOf(keyExpression));
	}

	/**
	 * Read a policy's penalty and penalty group.
	 * @return its part in a penalty group, or {@code null} if it sets neither
	 * @throws InvalidRateLimitPolicyException if the penalty is no duration, or out of bounds, or cannot apply
	 */
	static @Nullable Penalty parse(PolicySources values, String name, String where, RateLimitPolicy policy,
			String keyExpression, boolean sharedByEveryClient) {
		String text = values.getOrDefault("penalty", String.class, "").trim();
		String group = values.getOrDefault("penalty-group", String.class, "").trim();
		if (text.isEmpty() && group.isEmpty()) {
			return null;
		}
		String attribute = text.isEmpty() ? "'penalty-group'" : "'penalty'";
		if (sharedByEveryClient) {
			throw PolicyParser.invalid(name, where, attribute + " needs a key per client, and the key '"
					+ keyExpression + "' is every client's: one break would lock every client out"
					+ values.fromProperty(attribute));
		}
		if (policy.lease() != 0) {
			throw PolicyParser.invalid(name, where, "'lease' cannot apply with " + attribute + ": every request checks "
					+ "its penalty group in the store, so a lease would save no call" + values.fromProperty("'lease'"));
		}
		long lockMillis = 0;
		if (!text.isEmpty()) {
			Duration penalty = PolicyParser.parseDuration(text);
			if (penalty == null || penalty.compareTo(MAX) > 0 || penalty.toMillis() < 1) {
				throw PolicyParser.invalid(name, where, "'penalty' must be a duration of at least 1ms and at most 31 "
						+ "days (a longer one is a ban: keep it in a deny list), but was '" + text + "'"
						+ values.fromProperty("'penalty'"));
			}
			lockMillis = penalty.toMillis();
		}
		return of(group.isEmpty() ? name : group, lockMillis, policy.failureMode(), keyExpression);
	}

	/** A short name of the key expression: its SHA-256's first 8 bytes, in hex, and a separator. */
	private static String keySpaceOf(String keyExpression) {
		try {
			byte[] digest = MessageDigest.getInstance("SHA-256")
				.digest(keyExpression.getBytes(StandardCharsets.UTF_8));
			return HexFormat.of().formatHex(digest, 0, 8) + "|";
		}
		catch (NoSuchAlgorithmException ex) {
			throw new IllegalStateException("SHA-256 is part of every Java platform", ex);
		}
	}

	/** The key of the group's bucket that a key of the policy is locked out under. */
	String lockKey(String key) {
		return this.keySpace.isEmpty() ? key : this.keySpace + key;
	}

	/** Whether breaking the policy locks its key out, rather than only checking it. */
	boolean locks() {
		return this.lockMillis > 0;
	}

	/**
	 * The units a lock-out settles to: what its take left ({@code remaining}), and what the bucket's refill brings in
	 * {@link #lockMillis} less one, beyond the take. The bucket is then short of one unit until the penalty has
	 * passed since the take, exactly.
	 */
	long lockCost(long remaining) {
		return LOCK_TAKE + remaining + this.lockMillis * PER_MILLI - 1;
	}

	/**
	 * The wait of a check, from the wait of a lock-out's take that the bucket rejected: a check needs one unit, the
	 * take {@link #LOCK_TAKE}. Nothing left to wait: the bucket is refilling after a lock-out that ended (or another
	 * instance is locking the key out between its calls), and the key is not locked out.
	 */
	long checkWait(long takeWaitMillis) {
		return Math.max(0, takeWaitMillis - (LOCK_TAKE - 1) / PER_MILLI);
	}

}
