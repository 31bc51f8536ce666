package io.github.ratelimit.dynamodb;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;

import io.github.ratelimit.Decision;
import io.github.ratelimit.RateLimitPolicy;
import io.github.ratelimit.store.Acquisition;
import org.jspecify.annotations.Nullable;
import software.amazon.awssdk.services.dynamodb.model.AttributeValue;

/**
 * A concurrency limit in one item per key: how many slots are held ({@code n}), and when they were taken, as a map
 * from the millisecond to how many were taken then ({@code held}). Both change together in every write, so
 * {@code n} is always the sum of the map.
 * <ul>
 * <li>A slot is taken with one conditional update, {@code ADD n :1} and one more at its millisecond, on condition
 * that {@code n} leaves room: concurrent takers of a key do not conflict, as a fixed window's do not. The item as
 * updated comes back, so what is left is counted from the slots still held.
 * <li>It is given back with one conditional update that takes it from {@code n} and from its millisecond's count,
 * on condition that the count still holds it (a slot whose hold ended, dropped since, gives nothing back).
 * <li>A request that finds no room reads the item: slots older than the hold (their holder died) are dropped from
 * the map and from {@code n} in one write, on condition that their counts are unchanged, and the request is
 * decided again, as it is when slots were given back since; else it is rejected.
 * </ul>
 * The map holds one entry per millisecond with a slot held, so at most the limit, which is at most
 * {@value #MOST_SLOTS} (checked at start-up): far below DynamoDB's 400 KB for an item.
 */
final class ConcurrencyItems {

	/** The largest limit: each slot held may be an entry of the one item. */
	static final long MOST_SLOTS = 1_000;

	private static final int MAX_ATTEMPTS = 8;

	/** The most expired entries one write drops: an update expression is at most 4 KB. */
	private static final int MOST_DROPPED = 100;

	private static final Map<String, String> NAMES = Map.of("#n", "n", "#h", "held", "#t", "ttl");

	private final ItemKeys keys;

	ConcurrencyItems(ItemKeys keys) {
		this.keys = keys;
	}

	CompletableFuture<Decision> decide(DynamoDbCalls calls, RateLimitPolicy policy, String key, long now, long cost) {
		if (cost > policy.limit()) {
			return calls.get(this.keys.bucket(policy, key), calls.deadline())
				.thenApply((item) -> rejected(policy, new Slots(item, now, policy.windowMillis()), now, cost));
		}
		return attempt(calls, policy, key, now, cost, calls.deadline(), 0);
	}

	private CompletableFuture<Decision> attempt(DynamoDbCalls calls, RateLimitPolicy policy, String key, long now,
			long cost, long deadline, int attempt) {
		if (attempt >= MAX_ATTEMPTS) {
			return DynamoDbCalls.conflicted(policy, key, MAX_ATTEMPTS);
		}
		String pk = this.keys.bucket(policy, key);
		long limit = policy.limit();
		long hold = policy.windowMillis();
		Map<String, String> names = new HashMap<>(NAMES);
		names.put("#a", Long.toString(now));
		return calls.updateReturningItem(pk,
				"ADD #n :cost SET #h.#a = if_not_exists(#h.#a, :zero) + :cost, #t = :ttl",
				"attribute_exists(#h) AND #n <= :room", names,
				Map.of(":cost", DynamoDbCalls.number(cost), ":zero", DynamoDbCalls.number(0), ":room",
						DynamoDbCalls.number(limit - cost), ":ttl", DynamoDbCalls.ttl(now + hold)),
				deadline)
			.thenCompose((taken) -> {
				if (taken.applied()) {
					// What is left is the limit less the slots still held: n may still count some whose hold ended.
					Slots slots = new Slots(taken.attributes(), now, hold);
					long next = slots.live.isEmpty() ? hold : Math.min(hold, slots.live.get(0)[0] + hold - now);
					return done(Decision.allowed(limit, Math.max(0, limit - slots.held), hold, next));
				}
				// No room, or no item: read it (the condition's failure may have returned it already).
				return ((taken.attributes() != null) ? CompletableFuture.completedFuture(taken.attributes())
						: calls.get(pk, deadline))
					.thenCompose((item) -> full(calls, policy, key, now, cost, deadline, attempt, item));
			});
	}

	/** A request that found no room, or no item: create it, drop the slots whose hold ended, or reject. */
	private CompletableFuture<Decision> full(DynamoDbCalls calls, RateLimitPolicy policy, String key, long now,
			long cost, long deadline, int attempt, Map<String, AttributeValue> item) {
		String pk = this.keys.bucket(policy, key);
		long hold = policy.windowMillis();
		if (!item.containsKey("held")) {
			return calls.update(pk, "SET #h = :h, #n = :cost, #t = :ttl", "attribute_not_exists(#h)", NAMES,
					Map.of(":h", AttributeValue.fromM(Map.of(Long.toString(now), DynamoDbCalls.number(cost))), ":cost",
							DynamoDbCalls.number(cost), ":ttl", DynamoDbCalls.ttl(now + hold)),
					deadline)
				.thenCompose((created) -> created.applied()
						? done(Decision.allowed(policy.limit(), policy.limit() - cost, hold, hold))
						: attempt(calls, policy, key, now, cost, deadline, attempt + 1));
		}
		Slots slots = new Slots(item, now, hold);
		if (slots.expired.isEmpty()) {
			// Read after the write failed: slots given back meanwhile leave room for another try.
			return (slots.held + cost <= policy.limit())
					? attempt(calls, policy, key, now, cost, deadline, attempt + 1)
					: done(rejected(policy, slots, now, cost));
		}
		Map<String, String> names = new HashMap<>(NAMES);
		Map<String, AttributeValue> values = new HashMap<>();
		StringBuilder remove = new StringBuilder(" REMOVE ");
		StringBuilder unchanged = new StringBuilder("attribute_exists(#h)");
		long dropped = 0;
		for (int i = 0; i < slots.expired.size(); i++) {
			long[] entry = slots.expired.get(i);
			names.put("#e" + i, Long.toString(entry[0]));
			values.put(":c" + i, DynamoDbCalls.number(entry[1]));
			remove.append((i == 0) ? "" : ", ").append("#h.#e").append(i);
			unchanged.append(" AND #h.#e").append(i).append(" = :c").append(i);
			dropped += entry[1];
		}
		values.put(":dropped", DynamoDbCalls.number(-dropped));
		names.remove("#t");
		// Slots dropped are progress, not a conflict: only a failed drop counts as an attempt.
		return calls.update(pk, "ADD #n :dropped" + remove, unchanged.toString(), names, values, deadline)
			.thenCompose((drop) -> attempt(calls, policy, key, now, cost, deadline,
					drop.applied() ? attempt : attempt + 1));
	}

	private static Decision rejected(RateLimitPolicy policy, Slots slots, long now, long cost) {
		long limit = policy.limit();
		long hold = policy.windowMillis();
		long retry = hold;
		long toFree = slots.held + cost - limit;
		for (long[] entry : slots.live) {
			toFree -= entry[1];
			if (toFree <= 0) {
				retry = entry[0] + hold - now;
				break;
			}
		}
		// Another instance's clock may run ahead of this one's: no slot is held longer than a hold from now.
		long reset = slots.live.isEmpty() ? 0 : Math.min(hold, slots.live.get(slots.live.size() - 1)[0] + hold - now);
		long next = slots.live.isEmpty() ? hold : Math.min(hold, slots.live.get(0)[0] + hold - now);
		return Decision.rejected(limit, Math.max(0, limit - slots.held), reset,
				(cost > limit) ? Decision.NEVER : Math.max(1, Math.min(hold, retry)), next);
	}

	/** Give a slot back: from {@code n} and from its millisecond's count, if that still holds it. */
	CompletableFuture<DynamoDbCalls.Update> refund(DynamoDbCalls calls, Acquisition acquisition, long countedAtMillis) {
		return giveBack(calls, this.keys.bucket(acquisition.policy(), acquisition.key()), acquisition.cost(),
				Long.toString(countedAtMillis), calls.deadline(), 0);
	}

	/**
	 * Mostly one slot per millisecond: its entry goes with it. Else one less at that millisecond. A slot given back
	 * meanwhile at the same millisecond may fail both conditions: try again, a few times, unless the item read back
	 * shows the slot gone (dropped once its hold ended).
	 */
	private CompletableFuture<DynamoDbCalls.Update> giveBack(DynamoDbCalls calls, String pk, long slots, String at,
			long deadline, int attempt) {
		Map<String, String> names = Map.of("#n", "n", "#h", "held", "#a", at);
		Map<String, AttributeValue> values = Map.of(":back", DynamoDbCalls.number(-slots), ":cost",
				DynamoDbCalls.number(slots));
		return calls.update(pk, "ADD #n :back REMOVE #h.#a", "#h.#a = :cost", names, values, deadline)
			.thenCompose((removed) -> removed.applied() ? CompletableFuture.completedFuture(removed)
					: calls.update(pk, "ADD #n :back SET #h.#a = #h.#a - :cost", "#h.#a > :cost", names, values,
							deadline))
			.thenCompose((given) -> {
				if (given.applied() || attempt >= 2 || (given.attributes() != null && !holds(given.attributes(), at))) {
					return CompletableFuture.completedFuture(given);
				}
				return giveBack(calls, pk, slots, at, deadline, attempt + 1);
			});
	}

	private static boolean holds(Map<String, AttributeValue> item, String at) {
		AttributeValue held = item.get("held");
		return held != null && held.hasM() && held.m().containsKey(at);
	}

	/** Count more slots at the millisecond an admission was taken at, if it is still there. */
	CompletableFuture<DynamoDbCalls.Update> charge(DynamoDbCalls calls, Acquisition acquisition, long countedAtMillis) {
		return calls.update(this.keys.bucket(acquisition.policy(), acquisition.key()),
				"ADD #n :extra SET #h.#a = #h.#a + :extra", "attribute_exists(#h.#a)",
				Map.of("#n", "n", "#h", "held", "#a", Long.toString(countedAtMillis)),
				Map.of(":extra", DynamoDbCalls.number(acquisition.cost())), calls.deadline());
	}

	private static CompletableFuture<Decision> done(Decision decision) {
		return CompletableFuture.completedFuture(decision);
	}

	/** The slots of an item as read: those held, oldest first, and those whose hold ended. */
	private static final class Slots {

		final List<long[]> live = new ArrayList<>();

		final List<long[]> expired = new ArrayList<>(0);

		final long held;

		Slots(@Nullable Map<String, AttributeValue> item, long now, long hold) {
			AttributeValue map = (item != null) ? item.get("held") : null;
			long held = 0;
			if (map != null && map.hasM()) {
				for (Map.Entry<String, AttributeValue> entry : map.m().entrySet()) {
					long[] slot = { Long.parseLong(entry.getKey()), Long.parseLong(entry.getValue().n()) };
					if (slot[0] <= now - hold || slot[1] <= 0) {
						if (this.expired.size() < MOST_DROPPED) {
							this.expired.add(slot);
						}
					}
					else {
						this.live.add(slot);
						held += slot[1];
					}
				}
			}
			this.live.sort((a, b) -> Long.compare(a[0], b[0]));
			this.held = held;
		}

	}

}
