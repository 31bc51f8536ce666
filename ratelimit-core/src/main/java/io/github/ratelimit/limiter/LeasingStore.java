package io.github.ratelimit.limiter;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Function;

import io.github.ratelimit.Algorithm;
import io.github.ratelimit.Decision;
import io.github.ratelimit.RateLimitPolicy;
import io.github.ratelimit.TimeSource;
import io.github.ratelimit.store.Acquisition;
import io.github.ratelimit.store.OneByOne;
import io.github.ratelimit.store.PartialStoreFailureException;
import io.github.ratelimit.store.RateLimitStore;
import io.github.ratelimit.store.Reservation;
import io.github.ratelimit.store.ResetListener;
import io.github.ratelimit.store.SharedChanges;
import org.jspecify.annotations.Nullable;

/**
 * Leased quotas, in front of a shared store: for a policy that leases ({@link RateLimitPolicy#lease()}), this
 * instance takes a key's units a block at a time, in the one store call that decides the request that needs it, and
 * admits the key's next requests from the block without a round trip.
 * <p>
 * Every unit admitted from a block was counted by the store when the block was taken, so the fleet never admits more
 * than the store would; what it may admit less is what other instances hold unused. A block lives until the window
 * it was counted in ends ({@code FIXED}, and the current window of {@code SLIDING_COUNTER}), or for the time the
 * bucket takes to refill it (the buckets), counted from before the store was asked so that it never outlives the
 * store's own window; what is left then lapses. Units given back (count by outcome, a rejected request's other
 * limits) return to the live block they came from; a block that has gone gives them back to the store.
 * <p>
 * Blocks are kept for at most {@value #MAX_KEYS} keys: past that, keys without a block are decided by the store one
 * request at a time, so that a flood of keys costs memory no more than it costs the keys' own quotas.
 */
final class LeasingStore implements RateLimitStore {

	/** The most keys holding a block at once. */
	static final int MAX_KEYS = 65_536;

	/** An automatically sized block is at most the capacity divided by this. */
	static final long AUTO_SHARE = 16;

	private final RateLimitStore store;

	private final TimeSource clock;

	private final ConcurrentHashMap<BlockKey, Block> blocks = new ConcurrentHashMap<>();

	private final AtomicBoolean listening = new AtomicBoolean();

	/** No purge before this time: a flood of keys scans the blocks at most once a second. */
	private final AtomicLong nextPurgeAt = new AtomicLong(Long.MIN_VALUE);

	LeasingStore(RateLimitStore store, TimeSource clock) {
		this.store = store;
		this.clock = clock;
	}

	private record BlockKey(RateLimitPolicy policy, String key) {
	}

	/** A key's block, and what sizes its next one; guarded by its own monitor. */
	private static final class Block {

		/** Units not yet admitted. */
		long left;

		/** This instance's time at which what is left lapses. */
		long expiresAt = Long.MIN_VALUE;

		/** The store's time the block was counted at: what a unit given back is matched by. */
		long countedAt = Long.MIN_VALUE;

		/** What the store said was left once it had counted the block. */
		long storeRemaining;

		long resetAt;

		long nextUnitAt;

		/** The size of the last block taken. */
		long size;

		/** Until this instance's time, the store has too little left for a block: requests ask for their own. */
		long scarceUntil = Long.MIN_VALUE;

		/** Whether the block was reset or dropped: it admits nothing more. */
		boolean dropped;

		boolean live(long now) {
			return !this.dropped && now < this.expiresAt;
		}

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
		return tryAcquireAll(List.of(new Acquisition(policy, key, cost))).decisions().get(0);
	}

	@Override
	public Reservation tryAcquireAll(List<Acquisition> acquisitions) {
		if (!anyLeased(acquisitions)) {
			return this.store.tryAcquireAll(acquisitions);
		}
		return join(decide(acquisitions, this::askNow));
	}

	@Override
	public CompletionStage<Reservation> tryAcquireAllAsync(List<Acquisition> acquisitions) {
		if (!anyLeased(acquisitions)) {
			return this.store.tryAcquireAllAsync(acquisitions);
		}
		return decide(acquisitions, (asked) -> this.store.tryAcquireAllAsync(asked));
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
			if (ex.getCause() instanceof RuntimeException cause) {
				throw cause;
			}
			throw ex;
		}
	}

	/**
	 * Decide a request: each leased acquisition from its block, or from a block taken for it (or, when the store
	 * cannot give a block, by the store alone), one after the other; then the others together, in one call. All or
	 * nothing: if any is rejected, what the others took goes back.
	 */
	private CompletionStage<Reservation> decide(List<Acquisition> acquisitions,
			Function<List<Acquisition>, CompletionStage<Reservation>> ask) {
		Request request = new Request(acquisitions);
		CompletionStage<Void> leased = CompletableFuture.completedFuture(null);
		for (int i = 0; i < request.size; i++) {
			int index = i;
			if (leases(acquisitions.get(i).policy())) {
				leased = leased.thenCompose((ignored) -> request.rejected() ? CompletableFuture.completedFuture(null)
						: decideLeased(request, index, ask));
			}
		}
		return leased.thenCompose((ignored) -> {
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
					request.decided(others.get(j), reservation.decisions().get(j), reservation.countedAt(j), null);
				}
				return request.settle();
			});
		}).whenComplete((reservation, failure) -> {
			if (failure != null && !(unwrap(failure) instanceof PartialStoreFailureException)) {
				request.giveBackAll(); // the caller learns of nothing taken: nothing stays taken
			}
		});
	}

	private static RuntimeException unwrap(Throwable failure) {
		Throwable cause = (failure instanceof CompletionException && failure.getCause() != null) ? failure.getCause()
				: failure;
		return (cause instanceof RuntimeException ex) ? ex : new CompletionException(cause);
	}

	private CompletionStage<Void> decideLeased(Request request, int i,
			Function<List<Acquisition>, CompletionStage<Reservation>> ask) {
		Acquisition acquisition = request.acquisitions.get(i);
		RateLimitPolicy policy = acquisition.policy();
		long startedAt = this.clock.currentTimeMillis();
		Block block = block(acquisition);
		if (block != null) {
			synchronized (block) {
				if (block.live(startedAt) && block.left >= acquisition.cost()) {
					block.left -= acquisition.cost();
					request.decided(i, local(policy, block, startedAt), block.countedAt, block);
					return CompletableFuture.completedFuture(null);
				}
			}
		}
		if (block == null) {
			return ask(request, i, acquisition, ask); // too many keys hold a block: this one asks request by request
		}
		long size = Math.max(acquisition.cost(), nextSize(policy, block, startedAt));
		return (size == acquisition.cost()) ? ask(request, i, acquisition, ask)
				: takeBlock(request, i, block, size, startedAt, ask, true);
	}

	/**
	 * Ask the store for a block of {@code size} units, this request's among them. A store that has fewer left says
	 * how many: the block then takes those, if more than this request's, else the request asks for its own alone.
	 */
	private CompletionStage<Void> takeBlock(Request request, int i, Block block, long size, long startedAt,
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
				}
				return ask(request, i, acquisition, ask);
			}
			long countedAt = reservation.countedAt(0);
			synchronized (block) {
				if (block.dropped) {
					// Reset while the block was asked for: this request keeps its units, the rest lapse.
					request.decided(i, decision, countedAt, null);
					return CompletableFuture.completedFuture(null);
				}
				long expiresAt = startedAt + lifetime(policy, size, countedAt);
				if (block.live(startedAt) && block.left > 0) {
					block.expiresAt = Math.min(block.expiresAt, expiresAt); // merged: the earlier end holds for both
					block.left += size - acquisition.cost();
				}
				else {
					block.expiresAt = expiresAt;
					block.left = size - acquisition.cost();
				}
				block.countedAt = countedAt;
				block.size = size;
				block.storeRemaining = decision.remaining();
				block.resetAt = startedAt + decision.resetAfterMillis();
				block.nextUnitAt = startedAt + decision.nextUnitAfterMillis();
				request.decided(i, reported(policy, decision, block.left), countedAt, block);
			}
			return CompletableFuture.completedFuture(null);
		});
	}

	/** Ask the store for this request's units alone. */
	private CompletionStage<Void> ask(Request request, int i, Acquisition acquisition,
			Function<List<Acquisition>, CompletionStage<Reservation>> ask) {
		return ask.apply(List.of(acquisition)).thenAccept((reservation) -> request.decided(i,
				reservation.decisions().get(0), reservation.countedAt(0), null));
	}

	/** The key's block, created on first use; {@code null} if too many keys hold one already. */
	private @Nullable Block block(Acquisition acquisition) {
		BlockKey key = new BlockKey(acquisition.policy(), acquisition.key());
		Block block = this.blocks.get(key);
		if (block != null) {
			return block;
		}
		if (this.blocks.size() >= MAX_KEYS && purge() == 0) {
			return null;
		}
		if (this.listening.compareAndSet(false, true)) {
			this.store.addResetListener(new DropResetBlocks());
		}
		return this.blocks.computeIfAbsent(key, (k) -> new Block());
	}

	/** Forget the blocks that have lapsed, at most once a second; return how many went. */
	private int purge() {
		long now = this.clock.currentTimeMillis();
		long next = this.nextPurgeAt.get();
		if (now < next || !this.nextPurgeAt.compareAndSet(next, now + 1_000)) {
			return 0;
		}
		int before = this.blocks.size();
		this.blocks.values().removeIf((block) -> {
			synchronized (block) {
				return !block.live(now);
			}
		});
		return before - this.blocks.size();
	}

	/**
	 * The size of the key's next block: the policy's, or, for {@link RateLimitPolicy#LEASE_AUTO}, twice the last one
	 * if it was used up before it lapsed, else what of it was used; at least 1, at most the capacity divided by
	 * {@value #AUTO_SHARE}. None while the store had too little left for the last one, until the time it gave.
	 */
	private static long nextSize(RateLimitPolicy policy, Block block, long now) {
		synchronized (block) {
			if (now < block.scarceUntil) {
				return 1; // what the request costs: no block until the store has one to give
			}
			if (policy.lease() != RateLimitPolicy.LEASE_AUTO) {
				return policy.lease();
			}
			long most = Math.max(1, policy.capacity() / AUTO_SHARE);
			long last = Math.max(1, block.size);
			long next = (block.live(now) || block.left == 0) ? 2 * last : Math.max(1, last - block.left);
			return Math.min(most, next);
		}
	}

	/**
	 * How long a block counted at {@code countedAt} may be used: until the end of the window that counted it, or
	 * for a bucket the time it takes to refill the block (at least a millisecond, at most a window).
	 */
	static long lifetime(RateLimitPolicy policy, long size, long countedAt) {
		long window = policy.windowMillis();
		if (policy.algorithm() == Algorithm.FIXED || policy.algorithm() == Algorithm.SLIDING_COUNTER) {
			return window - Math.floorMod(countedAt, window);
		}
		// size × unitsPerToken stays below 2^51: the policy checks burst × unitsPerToken, and size ≤ burst.
		long units = size * policy.unitsPerToken();
		long refill = (units + policy.unitsPerMilli() - 1) / policy.unitsPerMilli();
		return Math.max(1, Math.min(window, refill));
	}

	private static Decision local(RateLimitPolicy policy, Block block, long now) {
		return new Decision(true, policy.limit(), Math.min(policy.limit(), block.storeRemaining + block.left),
				Math.max(0, block.resetAt - now), 0, Math.max(0, block.nextUnitAt - now), Decision.Origin.LEASE);
	}

	private static Decision reported(RateLimitPolicy policy, Decision decision, long left) {
		return new Decision(true, decision.limit(), Math.min(decision.limit(), decision.remaining() + left),
				decision.resetAfterMillis(), 0, decision.nextUnitAfterMillis(), decision.origin());
	}

	/** One request's acquisitions as they are decided. */
	private final class Request {

		final List<Acquisition> acquisitions;

		final int size;

		final @Nullable Decision[] decisions;

		final long[] countedAt;

		/** Per acquisition, the block its units came from, or {@code null} if the store holds them. */
		final @Nullable Block[] from;

		Request(List<Acquisition> acquisitions) {
			this.acquisitions = acquisitions;
			this.size = acquisitions.size();
			this.decisions = new Decision[this.size];
			this.countedAt = new long[this.size];
			this.from = new Block[this.size];
		}

		synchronized void decided(int i, Decision decision, long countedAt, @Nullable Block from) {
			this.decisions[i] = decision;
			this.countedAt[i] = countedAt;
			this.from[i] = from;
		}

		synchronized boolean rejected() {
			for (Decision decision : this.decisions) {
				if (decision != null && !decision.allowed()) {
					return true;
				}
			}
			return false;
		}

		/** The reservation; if rejected, what the admitted ones took is given back and the rest reported undecided. */
		synchronized Reservation settle() {
			if (rejected()) {
				giveBackAll();
				for (int i = 0; i < this.size; i++) {
					Decision decision = this.decisions[i];
					this.decisions[i] = (decision == null) ? OneByOne.notDecided(this.acquisitions.get(i))
							: OneByOne.givenBack(decision, this.acquisitions.get(i).cost());
				}
			}
			List<Decision> decided = new ArrayList<>(this.size);
			for (Decision decision : this.decisions) {
				decided.add(Decision.class.cast(decision));
			}
			return new Reservation(decided, this.countedAt);
		}

		/**
		 * The others' call failed: a partial failure is handed on for the whole request (the leased ones decided),
		 * anything else after giving back what the leased ones took.
		 */
		synchronized RuntimeException failed(List<Integer> others, RuntimeException failure) {
			if (!(failure instanceof PartialStoreFailureException partial)) {
				return failure;
			}
			@Nullable Decision[] all = this.decisions.clone();
			long[] times = this.countedAt.clone();
			for (int j = 0; j < others.size(); j++) {
				int i = others.get(j);
				all[i] = partial.failed(j) ? null : partial.decision(j);
				times[i] = partial.countedAt(j);
			}
			return new PartialStoreFailureException(all, times,
					(failure.getCause() instanceof RuntimeException cause) ? cause : failure);
		}

		/** Give back what every admitted acquisition took: to its block, or to the store. */
		synchronized void giveBackAll() {
			List<Acquisition> toStore = new ArrayList<>();
			List<Long> times = new ArrayList<>();
			for (int i = 0; i < this.size; i++) {
				Decision decision = this.decisions[i];
				if (decision == null || !decision.allowed() || decision.origin() == Decision.Origin.FAIL_OPEN) {
					continue;
				}
				Acquisition acquisition = this.acquisitions.get(i);
				if (!returnToBlock(acquisition, this.countedAt[i])) {
					toStore.add(acquisition);
					times.add(this.countedAt[i]);
				}
				this.decisions[i] = OneByOne.givenBack(decision, acquisition.cost());
			}
			if (!toStore.isEmpty()) {
				LeasingStore.this.store.refundAll(toStore, times.stream().mapToLong(Long::longValue).toArray());
			}
		}

	}

	/** Return whether this instance's live block of the key holds at least {@code cost} units. */
	boolean holds(RateLimitPolicy policy, String key, long cost, long now) {
		Block block = this.blocks.get(new BlockKey(policy, key));
		if (block == null) {
			return false;
		}
		synchronized (block) {
			return block.live(now) && block.left >= cost;
		}
	}

	/** Return units to the live block of the key that counted them at {@code countedAt}; whether it could. */
	private boolean returnToBlock(Acquisition acquisition, long countedAt) {
		if (!leases(acquisition.policy())) {
			return false;
		}
		Block block = this.blocks.get(new BlockKey(acquisition.policy(), acquisition.key()));
		if (block == null) {
			return false;
		}
		synchronized (block) {
			if (!block.live(this.clock.currentTimeMillis()) || block.countedAt != countedAt) {
				return false;
			}
			block.left += acquisition.cost();
			return true;
		}
	}

	@Override
	public void refund(Acquisition acquisition, long countedAtMillis) {
		if (!returnToBlock(acquisition, countedAtMillis)) {
			this.store.refund(acquisition, countedAtMillis);
		}
	}

	@Override
	public void refundAll(List<Acquisition> acquisitions, long[] countedAtMillis) {
		List<Acquisition> toStore = new ArrayList<>(acquisitions.size());
		List<Long> times = new ArrayList<>(acquisitions.size());
		for (int i = 0; i < acquisitions.size(); i++) {
			if (!returnToBlock(acquisitions.get(i), countedAtMillis[i])) {
				toStore.add(acquisitions.get(i));
				times.add(countedAtMillis[i]);
			}
		}
		if (!toStore.isEmpty()) {
			this.store.refundAll(toStore, times.stream().mapToLong(Long::longValue).toArray());
		}
	}

	@Override
	public CompletionStage<Void> refundAllAsync(List<Acquisition> acquisitions, long[] countedAtMillis) {
		List<Acquisition> toStore = new ArrayList<>(acquisitions.size());
		List<Long> times = new ArrayList<>(acquisitions.size());
		for (int i = 0; i < acquisitions.size(); i++) {
			if (!returnToBlock(acquisitions.get(i), countedAtMillis[i])) {
				toStore.add(acquisitions.get(i));
				times.add(countedAtMillis[i]);
			}
		}
		return toStore.isEmpty() ? CompletableFuture.completedFuture(null)
				: this.store.refundAllAsync(toStore, times.stream().mapToLong(Long::longValue).toArray());
	}

	/** Take a late cost from the live block its admission came from if it holds enough, else from the store. */
	@Override
	public void charge(Acquisition acquisition, long countedAtMillis) {
		if (leases(acquisition.policy())) {
			Block block = this.blocks.get(new BlockKey(acquisition.policy(), acquisition.key()));
			if (block != null) {
				synchronized (block) {
					if (block.live(this.clock.currentTimeMillis()) && block.countedAt == countedAtMillis
							&& block.left >= acquisition.cost()) {
						block.left -= acquisition.cost();
						return;
					}
				}
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
		drop(policy.name(), policy.variant(), key);
		this.store.reset(policy, key);
	}

	@Override
	public void clear() {
		dropAll();
		this.store.clear();
	}

	private void drop(String policy, String variant, String key) {
		this.blocks.entrySet().removeIf((entry) -> {
			BlockKey blockKey = entry.getKey();
			if (!blockKey.key().equals(key) || !blockKey.policy().name().equals(policy)
					|| !blockKey.policy().variant().equals(variant)) {
				return false;
			}
			Block block = entry.getValue();
			synchronized (block) {
				block.dropped = true;
			}
			return true;
		});
	}

	private void dropAll() {
		this.blocks.values().removeIf((block) -> {
			synchronized (block) {
				block.dropped = true;
			}
			return true;
		});
	}

	/** Drops the blocks of keys reset through any instance sharing the store. */
	private final class DropResetBlocks implements ResetListener {

		@Override
		public void onReset(String policy, String variant, String key) {
			drop(policy, variant, key);
		}

		@Override
		public void onClear() {
			dropAll();
		}

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
