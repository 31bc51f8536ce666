package io.github.ratelimit.dynamodb;

import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;

import io.github.ratelimit.Algorithm;
import io.github.ratelimit.CalendarWindow;
import io.github.ratelimit.Decision;
import io.github.ratelimit.RateLimitPolicy;
import io.github.ratelimit.store.Acquisition;
import io.github.ratelimit.store.PolicyNames;
import org.jspecify.annotations.Nullable;
import software.amazon.awssdk.services.dynamodb.model.AttributeValue;

/**
 * What each algorithm does to its items: decide a request, name the items a reset deletes, and give back or charge
 * the units of an admission already counted, each one conditional update of the item that counted them (a window's
 * count or a bucket's level).
 */
final class AlgorithmItems {

	private final ItemKeys keys;

	private final FixedWindowItems fixedWindows;

	private final SlidingCounterItems slidingCounters;

	private final TokenBucketItems buckets;

	private final ConcurrencyItems slots;

	private final PolicyNames names = new PolicyNames();

	AlgorithmItems(ItemKeys keys) {
		this.keys = keys;
		this.fixedWindows = new FixedWindowItems(keys);
		this.slidingCounters = new SlidingCounterItems(keys);
		this.buckets = new TokenBucketItems(keys);
		this.slots = new ConcurrencyItems(keys);
	}

	/** Decide one request, the policy checked to be the only configuration of its name and variant here. */
	CompletableFuture<Decision> decide(DynamoDbCalls calls, RateLimitPolicy policy, String key, long cost, long now) {
		try {
			this.names.check(policy);
			CalendarWindow calendar = policy.calendar();
			if (calendar != null) {
				long windowNow = calendar.windowTime(now);
				CompletableFuture<Decision> decision = (policy.algorithm() == Algorithm.FIXED)
						? this.fixedWindows.decide(calls, policy, key, windowNow, cost)
						: this.slidingCounters.decide(calls, policy, key, windowNow, cost);
				return decision.thenApply((decided) -> calendar.toEpochTime(decided, windowNow, now));
			}
			return switch (policy.algorithm()) {
				case FIXED -> this.fixedWindows.decide(calls, policy, key, now, cost);
				case SLIDING_COUNTER -> this.slidingCounters.decide(calls, policy, key, now, cost);
				case TOKEN_BUCKET, LEAKY_BUCKET -> this.buckets.decide(calls, policy, key, now, cost);
				case CONCURRENCY -> this.slots.decide(calls, policy, key, now, cost);
				case SLIDING_LOG -> throw DynamoDbRateLimitStore.unsupported(policy);
			};
		}
		catch (RuntimeException ex) {
			return CompletableFuture.failedFuture(ex);
		}
	}

	/** The items that hold the key's state under the policy, to delete for a reset. */
	List<String> itemsToReset(RateLimitPolicy policy, String key, long now) {
		now = windowTime(policy, now);
		return switch (policy.algorithm()) {
			case FIXED -> this.fixedWindows.itemsToReset(policy, key, now);
			case SLIDING_COUNTER -> this.slidingCounters.itemsToReset(policy, key, now);
			case TOKEN_BUCKET, LEAKY_BUCKET, CONCURRENCY -> List.of(this.buckets.itemToReset(policy, key));
			case SLIDING_LOG -> throw DynamoDbRateLimitStore.unsupported(policy);
		};
	}

	/** Forget what is cached of deleted items: all of them, or those named. */
	void forget(@Nullable List<String> items) {
		if (items == null) {
			this.slidingCounters.forgetAll();
		}
		else {
			this.slidingCounters.forget(items);
		}
	}

	/** The key of the window item that counted an acquisition admitted at {@code countedAtMillis}. */
	private String windowCounted(Acquisition acquisition, long countedAtMillis) {
		long window = acquisition.policy().windowMillis();
		long countedAt = windowTime(acquisition.policy(), countedAtMillis);
		return this.keys.window(acquisition.policy(), acquisition.key(), countedAt - Math.floorMod(countedAt, window));
	}

	/** The time a policy counts its windows on: its calendar window's window time, if it has one. */
	static long windowTime(RateLimitPolicy policy, long epochMillis) {
		CalendarWindow calendar = policy.calendar();
		return (calendar != null) ? calendar.windowTime(epochMillis) : epochMillis;
	}

	/** The expiry of an item whose window ends at {@code windowTime}: in milliseconds since the epoch, for its TTL. */
	static AttributeValue ttl(RateLimitPolicy policy, long windowTime) {
		CalendarWindow calendar = policy.calendar();
		return DynamoDbCalls.ttl((calendar != null) ? calendar.epochMillis(windowTime) : windowTime);
	}

	/**
	 * Give the units back with one conditional ADD: to the window item that counted them, or out of the bucket's
	 * level (only in the units it was taken in). A window that is gone or holds less gives nothing back.
	 */
	CompletableFuture<DynamoDbCalls.Update> refund(DynamoDbCalls calls, Acquisition acquisition,
			long countedAtMillis) {
		RateLimitPolicy policy = acquisition.policy();
		long deadline = calls.deadline();
		return switch (policy.algorithm()) {
			case FIXED, SLIDING_COUNTER -> calls.update(windowCounted(acquisition, countedAtMillis), "ADD #c :back",
					"#c >= :cost", Map.of("#c", "count"), Map.of(":back", DynamoDbCalls.number(-acquisition.cost()),
							":cost", DynamoDbCalls.number(acquisition.cost())),
					deadline);
			case TOKEN_BUCKET, LEAKY_BUCKET -> {
				long need = acquisition.cost() * policy.unitsPerToken();
				// Only in the units it was taken in: a bucket counted under a changed limit since gives nothing back.
				yield calls.update(this.keys.bucket(policy, acquisition.key()), "ADD #x :back",
						"#x >= :need AND #p = :pt", Map.of("#x", "level", "#p", "pt"),
						Map.of(":back", DynamoDbCalls.number(-need), ":need", DynamoDbCalls.number(need), ":pt",
								DynamoDbCalls.number(policy.unitsPerToken())),
						deadline);
			}
			case CONCURRENCY -> this.slots.refund(calls, acquisition, countedAtMillis);
			case SLIDING_LOG -> throw DynamoDbRateLimitStore.unsupported(policy);
		};
	}

	/**
	 * Take the extra units with one conditional update: the window's count, or the bucket's level (in the same
	 * units), if the item is still there; a bucket's expiry is pushed back by the time the extra takes to drain.
	 */
	CompletableFuture<DynamoDbCalls.Update> charge(DynamoDbCalls calls, Acquisition acquisition, long countedAtMillis,
			long now) {
		RateLimitPolicy policy = acquisition.policy();
		long deadline = calls.deadline();
		return switch (policy.algorithm()) {
			case FIXED, SLIDING_COUNTER -> calls.update(windowCounted(acquisition, countedAtMillis), "ADD #c :extra",
					"attribute_exists(#c)", Map.of("#c", "count"),
					Map.of(":extra", DynamoDbCalls.number(acquisition.cost())), deadline);
			case TOKEN_BUCKET, LEAKY_BUCKET -> {
				long need = (acquisition.cost() > (Long.MAX_VALUE / 8) / policy.unitsPerToken()) ? Long.MAX_VALUE / 8
						: acquisition.cost() * policy.unitsPerToken();
				long drained = now + (policy.burst() * policy.unitsPerToken() + need + policy.unitsPerMilli() - 1)
						/ policy.unitsPerMilli();
				yield calls.update(this.keys.bucket(policy, acquisition.key()), "ADD #x :need SET #t = :ttl",
						"attribute_exists(#x) AND #p = :pt", Map.of("#x", "level", "#p", "pt", "#t", "ttl"),
						Map.of(":need", DynamoDbCalls.number(need), ":pt", DynamoDbCalls.number(policy.unitsPerToken()),
								":ttl", DynamoDbCalls.ttl(drained)),
						deadline);
			}
			case CONCURRENCY -> this.slots.charge(calls, acquisition, countedAtMillis);
			case SLIDING_LOG -> throw DynamoDbRateLimitStore.unsupported(policy);
		};
	}

}
