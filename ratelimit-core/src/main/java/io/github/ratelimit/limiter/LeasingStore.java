package io.github.ratelimit.limiter;

import java.lang.System.Logger;
import java.lang.System.Logger.Level;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CompletionStage;
import java.util.function.Function;

import io.github.ratelimit.Decision;
import io.github.ratelimit.RateLimitPolicy;
import io.github.ratelimit.TimeSource;
import io.github.ratelimit.store.Acquisition;
import io.github.ratelimit.store.RateLimitStore;
import io.github.ratelimit.store.Reservation;
import io.github.ratelimit.store.ResetListener;
import io.github.ratelimit.store.SharedChanges;
import org.jspecify.annotations.Nullable;

/**
 * Leased quotas, in front of a shared store: for a policy that leases ({@link RateLimitPolicy#lease()}), this
 * instance takes a key's units a block at a time, in the one store call that decides the request that needs it, and
 * admits the key's next requests from the block without a round trip. While one request of the instance takes the
 * key's block, its other requests wait for it rather than take one each.
 * <p>
 * Every unit admitted from a block was counted by the store when the block was taken, and is admitted while the
 * store would still have admitted it then: in a window ({@code FIXED}, and the current window of
 * {@code SLIDING_COUNTER}) until the window ends; in a bucket while the bucket could not have refilled to its burst
 * with the block's units still out of it. So the fleet never admits more than the store would; what it may admit
 * less is what other instances hold unused, and what lapses. Units given back (count by outcome, a rejected
 * request's other limits) return to the live block they came from; a block that has gone gives them back to the
 * store.
 * <p>
 * Blocks are kept for at most {@value #MAX_KEYS} keys: past that, keys without a block are decided by the store one
 * request at a time, so that a flood of keys costs memory no more than it costs the keys' own quotas.
 */
final class LeasingStore implements RateLimitStore {

	/** The most keys holding a block at once. */
	static final int MAX_KEYS = 65_536;

	/** An automatically sized block is at most the capacity divided by this. */
	static final long AUTO_SHARE = 16;

	private static final Logger logger = System.getLogger(LeasingStore.class.getName());

	private final RateLimitStore store;

	private final TimeSource clock;

	private final LeaseBlocks blocks;

	private final ThrottledLogger refundFailures = new ThrottledLogger(logger,
			RateLimiter.DEFAULT_FAILURE_LOG_INTERVAL_MILLIS);

	LeasingStore(RateLimitStore store, TimeSource clock) {
		this.store = store;
		this.clock = clock;
		this.blocks = new LeaseBlocks(store, clock);
	}

	static boolean leases(RateLimitPolicy policy) {
		return policy.lease() != 0;
	}

	private static boolean anyLeased(List<Acquisition> acquisitions) {
		for (Acquisition acquisition : acquisitions) {
			if (leases(acquisition.policy())) {
				return true;
			}
		}
		return false;
	}

	@Override
	public Decision tryAcquire(RateLimitPolicy policy, String key, long cost) {
		if (!leases(policy)) {
			return this.store.tryAcquire(policy, key, cost);
		}
		Acquisition acquisition = new Acquisition(policy, key, cost);
		LeaseBlock block = this.blocks.block(acquisition);
		if (block != null) {
			long now = this.clock.monotonicMillis();
			LeaseGrant grant = block.grant;
			if (grant != null && grant.take(cost, now)) {
				return grant.admitted(policy, now);
			}
		}
		if (block == null || asksAlone(policy, block, cost)) {
			// No block to take from or to take: the store's own decision of one request, which it batches with the
			// policy's other requests as it would an unleased one's.
			long startedAt = this.clock.monotonicMillis();
			Decision decision = this.store.tryAcquire(policy, key, cost);
			if (block != null) {
				LeaseBlock.noteRemaining(block, decision, startedAt);
			}
			return decision;
		}
		return join(decide(List.of(acquisition), this::askNow, false)).decisions().get(0);
	}

	/** Whether a request of the key would ask the store for its own units alone: no block holds them or is taken. */
	private boolean asksAlone(RateLimitPolicy policy, LeaseBlock block, long cost) {
		long now = this.clock.monotonicMillis();
		synchronized (block) {
			return block.refilling == null && LeaseBlock.plannedSize(policy, block, cost, now) == cost;
		}
	}

	@Override
	public Reservation tryAcquireAll(List<Acquisition> acquisitions) {
		if (!anyLeased(acquisitions)) {
			return this.store.tryAcquireAll(acquisitions);
		}
		Reservation local = fromBlockAlone(acquisitions);
		return (local != null) ? local : join(decide(acquisitions, this::askNow, false));
	}

	@Override
	public CompletionStage<Reservation> tryAcquireAllAsync(List<Acquisition> acquisitions) {
		if (!anyLeased(acquisitions)) {
			return this.store.tryAcquireAllAsync(acquisitions);
		}
		Reservation local = fromBlockAlone(acquisitions);
		return (local != null) ? CompletableFuture.completedFuture(local)
				: decide(acquisitions, this.store::tryAcquireAllAsync, true);
	}

	/** The common case, kept short: one leased acquisition that its live block holds the units of. */
	private @Nullable Reservation fromBlockAlone(List<Acquisition> acquisitions) {
		if (acquisitions.size() != 1) {
			return null;
		}
		Acquisition acquisition = acquisitions.get(0);
		LeaseBlock block = this.blocks.get(acquisition.policy(), acquisition.key());
		if (block == null) {
			return null;
		}
		long now = this.clock.monotonicMillis();
		LeaseGrant grant = block.grant;
		if (grant == null || !grant.take(acquisition.cost(), now)) {
			return null;
		}
		return new Reservation(List.of(grant.admitted(acquisition.policy(), now)), new long[] { grant.countedAt });
	}

	private CompletionStage<Reservation> askNow(List<Acquisition> asked) {
		try {
			return CompletableFuture.completedFuture(this.store.tryAcquireAll(asked));
		}
		catch (RuntimeException ex) {
			return CompletableFuture.failedFuture(ex);
		}
	}

	private static Reservation join(CompletionStage<Reservation> stage) {
		try {
			return stage.toCompletableFuture().join();
		}
		catch (CompletionException ex) {
			throw unwrap(ex);
		}
	}

	private static RuntimeException unwrap(Throwable failure) {
		Throwable cause = (failure instanceof CompletionException && failure.getCause() != null) ? failure.getCause()
				: failure;
		return (cause instanceof RuntimeException ex) ? ex : new CompletionException(cause);
	}

	/**
	 * Decide a request: each leased acquisition from its block, or from a block taken for it (or, when the store
	 * cannot give a block, by the store alone), one after the other; then the others together, in one call, which
	 * the store decides all or nothing among themselves. If any is rejected, what this instance took for the leased
	 * ones goes back. If the store fails after some were taken, the failure is a partial one: the caller decides
	 * the rest by their failure modes and keeps or gives back what was taken.
	 */
	private CompletionStage<Reservation> decide(List<Acquisition> acquisitions,
			Function<List<Acquisition>, CompletionStage<Reservation>> ask, boolean nonBlocking) {
		LeasedRequest request = new LeasedRequest(this, this.blocks, acquisitions, nonBlocking);
		CompletionStage<Void> leased = CompletableFuture.completedFuture(null);
		for (int i = 0; i < request.size; i++) {
			int index = i;
			if (leases(acquisitions.get(i).policy())) {
				leased = leased.thenCompose((ignored) -> request.rejected() ? CompletableFuture.completedFuture(null)
						: decideLeased(request, index, ask));
			}
		}
		return leased.handle((ignored, failure) -> {
			if (failure != null) {
				throw request.failed(List.of(), unwrap(failure));
			}
			return request;
		}).thenCompose((decided) -> {
			List<Integer> others = new ArrayList<>();
			for (int i = 0; i < request.size; i++) {
				if (request.decisions[i] == null) {
					others.add(i);
				}
			}
			if (request.rejected() || others.isEmpty()) {
				return CompletableFuture.completedFuture(request.settle());
			}
			List<Acquisition> asked = others.stream().map(acquisitions::get).toList();
			return ask.apply(asked).handle((reservation, failure) -> {
				if (failure != null) {
					throw request.failed(others, unwrap(failure));
				}
				for (int j = 0; j < others.size(); j++) {
					request.decided(others.get(j), reservation.decisions().get(j), reservation.countedAt(j), null,
							false);
				}
				return request.settle();
			});
		});
	}

	private CompletionStage<Void> decideLeased(LeasedRequest request, int i,
			Function<List<Acquisition>, CompletionStage<Reservation>> ask) {
		Acquisition acquisition = request.acquisitions.get(i);
		RateLimitPolicy policy = acquisition.policy();
		LeaseBlock block = this.blocks.block(acquisition);
		if (block == null) {
			return ask(request, i, acquisition, ask); // too many keys hold a block: this one asks request by request
		}
		while (true) {
			long startedAt = this.clock.monotonicMillis();
			CompletableFuture<Void> pending;
			long size;
			boolean dropped = false;
			LeaseGrant grant = block.grant;
			if (grant != null && grant.take(acquisition.cost(), startedAt)) {
				request.decided(i, grant.admitted(policy, startedAt), grant.countedAt, block, true);
				return CompletableFuture.completedFuture(null);
			}
			synchronized (block) {
				if (block.dropped) {
					dropped = true; // reset since this request found it: a block taken now would lapse unused
				}
				pending = block.refilling;
				size = acquisition.cost();
				if (!dropped && pending == null) {
					size = LeaseBlock.plannedSize(policy, block, acquisition.cost(), startedAt);
					if (size > acquisition.cost()) {
						block.refilling = new CompletableFuture<>();
					}
				}
			}
			if (dropped) {
				return decideLeased(request, i, ask); // the key's new block
			}
			if (pending != null) {
				// Another request of this instance is taking the key's block: use it rather than take one more.
				CompletableFuture<Void> taken = pending.handle((ignored, failure) -> null);
				if (request.nonBlocking) {
					return taken.thenCompose((ignored) -> decideLeased(request, i, ask));
				}
				taken.join();
				continue;
			}
			if (size == acquisition.cost()) {
				return ask(request, i, acquisition, ask);
			}
			return takeBlock(request, i, block, size, startedAt, ask, true).whenComplete((ignored, failure) -> {
				CompletableFuture<Void> refilled;
				synchronized (block) {
					refilled = block.refilling;
					block.refilling = null;
				}
				if (refilled != null) {
					refilled.complete(null);
				}
			});
		}
	}

	/**
	 * Ask the store for a block of {@code size} units, this request's among them. A store that has fewer left says
	 * how many: the block then takes those, if more than this request's, else the request asks for its own alone.
	 */
	private CompletionStage<Void> takeBlock(LeasedRequest request, int i, LeaseBlock block, long size, long startedAt,
			Function<List<Acquisition>, CompletionStage<Reservation>> ask, boolean mayShrink) {
		Acquisition acquisition = request.acquisitions.get(i);
		RateLimitPolicy policy = acquisition.policy();
		Acquisition wholeBlock = new Acquisition(policy, acquisition.key(), size);
		return ask.apply(List.of(wholeBlock)).thenCompose((reservation) -> {
			Decision decision = reservation.decisions().get(0);
			if (!decision.allowed()) {
				long left = decision.remaining();
				if (mayShrink && left > acquisition.cost() && left < size) {
					return takeBlock(request, i, block, left, startedAt, ask, false);
				}
				synchronized (block) {
					block.scarceUntil = startedAt + decision.retryAfterMillis();
					block.lastRemaining = decision.remaining();
					block.lastKnownAt = startedAt;
				}
				return ask(request, i, acquisition, ask);
			}
			long countedAt = reservation.countedAt(0);
			synchronized (block) {
				if (block.dropped) {
					// Reset while the block was asked for: this request keeps its units, the rest lapse.
					request.decided(i, decision, countedAt, null, true);
					return CompletableFuture.completedFuture(null);
				}
				LeaseGrant old = block.grant;
				// Units given back since it ran out, or left by requests that raced this one, go on in the new grant.
				long carried = (old != null && old.live(startedAt)) ? old.left.getAndSet(0) : 0;
				long unspent = carried + size - acquisition.cost();
				long expiresAt = startedAt + LeaseBlock.lifetime(policy, countedAt, decision.remaining(), unspent);
				long takenAt = startedAt;
				if (old != null && carried > 0) {
					takenAt = old.takenAt;
					expiresAt = Math.min(old.expiresAt, expiresAt); // the earlier end holds for both
				}
				block.grant = new LeaseGrant(unspent, takenAt, expiresAt, countedAt, decision.remaining(),
						startedAt + decision.resetAfterMillis(), startedAt + decision.nextUnitAfterMillis());
				block.size = size;
				block.lastRemaining = decision.remaining();
				block.lastKnownAt = startedAt;
				request.decided(i, LeaseBlock.reported(policy, decision, unspent), countedAt, block, true);
			}
			return CompletableFuture.completedFuture(null);
		});
	}

	/** Ask the store for this request's units alone. */
	private CompletionStage<Void> ask(LeasedRequest request, int i, Acquisition acquisition,
			Function<List<Acquisition>, CompletionStage<Reservation>> ask) {
		long startedAt = this.clock.monotonicMillis();
		return ask.apply(List.of(acquisition)).thenAccept((reservation) -> {
			Decision decision = reservation.decisions().get(0);
			LeaseBlock block = this.blocks.get(acquisition.policy(), acquisition.key());
			if (block != null) {
				LeaseBlock.noteRemaining(block, decision, startedAt);
			}
			request.decided(i, decision, reservation.countedAt(0), null, true);
		});
	}

	/** Give units back to the store, logging rather than throwing if it cannot: the client stays counted. */
	void refundQuietly(List<Acquisition> acquisitions, long[] countedAt, boolean nonBlocking) {
		try {
			if (nonBlocking) {
				this.store.refundAllAsync(acquisitions, countedAt).exceptionally((failure) -> {
					logRefundFailure(unwrap(failure));
					return null;
				});
			}
			else {
				this.store.refundAll(acquisitions, countedAt);
			}
		}
		catch (RuntimeException ex) {
			logRefundFailure(ex);
		}
	}

	private void logRefundFailure(RuntimeException failure) {
		this.refundFailures.log(Level.WARNING, this.clock.monotonicMillis(),
				(skipped) -> "Rate limit store could not give back leased units of a rejected request ("
						+ failure.getMessage() + "); the client stays counted"
						+ ((skipped > 0) ? " (" + skipped + " more since the last message)" : ""),
				null);
	}

	/** Return whether this instance's live block of the key holds at least {@code cost} units. */
	boolean holds(RateLimitPolicy policy, String key, long cost) {
		return this.blocks.holds(policy, key, cost);
	}

	@Override
	public void refund(Acquisition acquisition, long countedAtMillis) {
		if (!this.blocks.returnToBlock(acquisition, countedAtMillis)) {
			this.store.refund(acquisition, countedAtMillis);
		}
	}

	@Override
	public void refundAll(List<Acquisition> acquisitions, long[] countedAtMillis) {
		ForStore rest = returnToBlocks(acquisitions, countedAtMillis);
		if (!rest.acquisitions().isEmpty()) {
			this.store.refundAll(rest.acquisitions(), rest.countedAt());
		}
	}

	@Override
	public CompletionStage<Void> refundAllAsync(List<Acquisition> acquisitions, long[] countedAtMillis) {
		ForStore rest = returnToBlocks(acquisitions, countedAtMillis);
		return rest.acquisitions().isEmpty() ? CompletableFuture.completedFuture(null)
				: this.store.refundAllAsync(rest.acquisitions(), rest.countedAt());
	}

	/** Units given back that the store keeps: those whose block has gone. */
	private record ForStore(List<Acquisition> acquisitions, long[] countedAt) {
	}

	/** Return each acquisition's units to its live block; what has no block left goes back to the store. */
	private ForStore returnToBlocks(List<Acquisition> acquisitions, long[] countedAtMillis) {
		List<Acquisition> toStore = new ArrayList<>(acquisitions.size());
		List<Long> times = new ArrayList<>(acquisitions.size());
		for (int i = 0; i < acquisitions.size(); i++) {
			if (!this.blocks.returnToBlock(acquisitions.get(i), countedAtMillis[i])) {
				toStore.add(acquisitions.get(i));
				times.add(countedAtMillis[i]);
			}
		}
		return new ForStore(toStore, times.stream().mapToLong(Long::longValue).toArray());
	}

	/** Take a late cost from the live block its admission came from if it holds enough, else from the store. */
	@Override
	public void charge(Acquisition acquisition, long countedAtMillis) {
		if (leases(acquisition.policy())) {
			LeaseBlock block = this.blocks.get(acquisition.policy(), acquisition.key());
			LeaseGrant grant = (block != null) ? block.grant : null;
			if (grant != null && grant.countedAt == countedAtMillis
					&& grant.take(acquisition.cost(), this.clock.monotonicMillis())) {
				return;
			}
		}
		this.store.charge(acquisition, countedAtMillis);
	}

	@Override
	public Decision peek(RateLimitPolicy policy, String key) {
		return this.store.peek(policy, key);
	}

	@Override
	public long currentTimeMillis() {
		return this.store.currentTimeMillis();
	}

	/** Drop this instance's block of the key, then reset it in the store. */
	@Override
	public void reset(RateLimitPolicy policy, String key) {
		this.blocks.drop(policy.name(), policy.variant(), key);
		try {
			this.store.reset(policy, key);
		}
		finally {
			this.blocks.drop(policy.name(), policy.variant(), key); // a block taken while the reset was under way
		}
	}

	@Override
	public void clear() {
		this.blocks.dropAll();
		this.store.clear();
	}

	@Override
	public void addResetListener(ResetListener listener) {
		this.store.addResetListener(listener);
	}

	@Override
	public @Nullable SharedChanges sharedChanges() {
		return this.store.sharedChanges();
	}

	@Override
	public void checkSupported(RateLimitPolicy policy) {
		this.store.checkSupported(policy);
	}

	@Override
	public void checkSharedKey(RateLimitPolicy policy) {
		this.store.checkSharedKey(policy);
	}

	@Override
	public boolean isPartitioned() {
		return this.store.isPartitioned();
	}

	@Override
	public String partitionOf(RateLimitPolicy policy, String key) {
		return this.store.partitionOf(policy, key);
	}

	@Override
	public boolean isLocal() {
		return this.store.isLocal();
	}

}
