package io.github.ratelimit.dynamodb;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicLong;

import io.github.ratelimit.Algorithm;
import io.github.ratelimit.Decision;
import io.github.ratelimit.RateLimitPolicy;
import io.github.ratelimit.TimeSource;
import io.github.ratelimit.store.Acquisition;
import io.github.ratelimit.store.OneByOne;
import io.github.ratelimit.store.SharedChanges;
import io.github.ratelimit.store.RateLimitStore;
import io.github.ratelimit.store.Reservation;
import io.github.ratelimit.store.ResetListener;
import org.jspecify.annotations.Nullable;
import software.amazon.awssdk.services.dynamodb.DynamoDbAsyncClient;
import software.amazon.awssdk.services.dynamodb.DynamoDbClient;

/**
 * A {@link RateLimitStore} on DynamoDB, through the AWS SDK for Java v2: one item per key (and per window for the
 * windowed algorithms) in one table whose partition key is {@code pk} (a string).
 * <ul>
 * <li>{@link Algorithm#FIXED}: one conditional {@code UpdateItem} ({@code ADD}) per decision, admitted or rejected.
 * <li>{@link Algorithm#SLIDING_COUNTER}: the same, plus one read per key and window for the previous window's count.
 * <li>{@link Algorithm#TOKEN_BUCKET} and {@link Algorithm#LEAKY_BUCKET}: a strongly consistent read, then a
 * conditional write when the request passes (a rejection writes nothing); retried on a conflicting write.
 * <li>{@link Algorithm#CONCURRENCY}: the slots held in one item per key; taking a slot is one conditional update
 * (a strongly consistent read only when it finds no room), giving it back is one more. At most 1,000 slots.
 * <li>{@link Algorithm#SLIDING_LOG} is not supported: its log would be rewritten on every request. Policies using it
 * fail at start-up ({@link #checkSupported}).
 * </ul>
 * <b>Time</b> comes from the application's clock ({@link TimeSource}): DynamoDB has none to offer. Instances agree
 * on windows as closely as their clocks agree (NTP keeps them within milliseconds): with every clock within
 * {@code δ} of true time, a window's item takes admissions during {@code W + 2δ} of real time instead of {@code W}, so
 * a fixed window admits at most {@code L} per item, {@code 2L} in any interval up to {@code W - 2δ} long, and
 * {@code 3L} in any {@code W} (against {@code 2L} with one clock). A clock that steps back never reopens a window: the store's time never runs backwards
 * (it stays at the latest time it used until the clock passes it, for every key of this instance), and a bucket
 * counts from the later of the clock and the time stored in its item.
 * <p>
 * <b>Exactness</b>: decisions are never retried by the SDK, whatever the client's retry strategy: an {@code ADD}
 * whose response was lost may have landed, and a retry would count it twice. A failed or timed-out call fails the
 * decision, which the limiter answers with the policy's failure mode.
 * <p>
 * <b>Without waiting</b>: built with a {@link Builder#asyncClient DynamoDbAsyncClient}, the store decides
 * {@link #tryAcquireAllAsync} and gives back {@link #refundAllAsync} on it, so that no thread waits for DynamoDB (what
 * a WebFlux application or a gateway needs); the decisions are the same calls, written once for both clients.
 * <p>
 * <b>Failures</b> (throttling, timeouts, an unreachable endpoint) are {@link io.github.ratelimit.store.RateLimitStoreException}s.
 * The limiter keeps a circuit breaker per {@linkplain #partitionOf group of keys} ({@value #KEY_GROUPS} groups by
 * hash), so that one hot key throttled by its partition's write capacity opens the circuit for its group only.
 * <p>
 * <b>Resets reach every instance</b>: a {@link #reset} or {@link #clear} through any instance sharing the table and
 * key prefix is counted in one item, {@code <prefix>#resets}, which every instance with a {@link #addResetListener
 * listener} (a limiter's deny cache) reads once per {@link Builder#resetPollInterval poll interval}: each then
 * forgets its cached denials of the key (or all of them) within about one interval. Best effort, as on Redis: a
 * failed read is retried at the next interval, and a reset whose count could not be written stands in DynamoDB,
 * logged. {@link #close()} stops the reading.
 *
 * @since 0.1.0
 */
public final class DynamoDbRateLimitStore implements RateLimitStore, AutoCloseable {

	/** The table of the seed. */
	public static final String DEFAULT_TABLE = "rate-limits";

	/** Prefix of every partition key the store writes, so that applications can share a table. */
	public static final String DEFAULT_KEY_PREFIX = "ratelimit";

	/** Time a decision may take, all its calls included; DynamoDB answers in single-digit milliseconds. */
	public static final long DEFAULT_TIMEOUT_MILLIS = 500;

	/** How often an instance reads the resets made through the others, by default. */
	public static final long DEFAULT_RESET_POLL_INTERVAL_MILLIS = 1_000;

	/** Circuit breaker groups: keys are spread over them by hash. */
	static final int KEY_GROUPS = 16;

	/** About what one item takes: a partition's 1,000 write units a second. */
	static final int ITEM_WRITES_PER_SECOND = 1_000;

	private static final String[] GROUP_NAMES = groupNames();

	/** How long start-up waits for the asynchronous client's first answer. */
	private static final Duration WARM_UP_TIMEOUT = Duration.ofSeconds(10);

	private final DynamoDbClient client;

	private final String table;

	private final TimeSource clock;

	private final boolean createTable;

	private final String keyPrefix;

	private final AtomicLong latest = new AtomicLong(Long.MIN_VALUE);

	private final DynamoDbCalls calls;

	private final DynamoDbSharedChanges sharedChanges;

	private final DynamoDbResets resets;

	/** The calls on the asynchronous client, if the store was given one. */
	private final @Nullable DynamoDbCalls asyncCalls;

	private final @Nullable DynamoDbAsyncClient asyncClient;

	private final AlgorithmItems items;


	private DynamoDbRateLimitStore(Builder builder) {
		this.client = builder.client;
		this.table = builder.table;
		this.clock = builder.clock;
		this.createTable = builder.createTable;
		this.keyPrefix = builder.keyPrefix;
		this.calls = new DynamoDbCalls(builder.client, builder.table, builder.timeout);
		this.sharedChanges = new DynamoDbSharedChanges(this.calls, builder.keyPrefix);
		this.resets = new DynamoDbResets(this.calls, builder.keyPrefix, builder.resetPollInterval);
		this.asyncClient = builder.asyncClient;
		this.asyncCalls = (builder.asyncClient != null)
				? new DynamoDbCalls(builder.client, builder.asyncClient, builder.table, builder.timeout) : null;
		this.items = new AlgorithmItems(new ItemKeys(builder.keyPrefix));
	}

	/**
	 * Start building a store on the given client. The client's own retry strategy is not used for decisions.
	 * @param client the DynamoDB client
	 * @return a builder
	 */
	public static Builder builder(DynamoDbClient client) {
		return new Builder(client);
	}

	/**
	 * Check the table, creating it if the store was built to: fails if it is missing (and may not be created) or has
	 * another key; an unreachable DynamoDB is logged, and decisions follow the failure mode until it answers.
	 * @throws IllegalStateException if the table cannot be used
	 */
	public void start() {
		new TableSetup(this.client, this.table).ensureTable(this.createTable);
		warmUpAsyncClient();
	}

	/**
	 * Open the asynchronous client's first connection before any decision needs it: its first call loads and starts
	 * its HTTP client (an event loop group, a connection pool), which on a cold JVM takes longer than a decision's
	 * timeout, so that a burst arriving right after start-up would fall to the failure mode.
	 */
	private void warmUpAsyncClient() {
		DynamoDbAsyncClient async = this.asyncClient;
		if (async == null) {
			return;
		}
		try {
			async.describeTable((request) -> request.tableName(this.table)).get(WARM_UP_TIMEOUT.toMillis(),
					TimeUnit.MILLISECONDS);
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
		}
		catch (ExecutionException | TimeoutException ex) {
			// Unreachable, or slow: the table check said so already, and decisions follow the failure mode.
		}
	}

	@Override
	public void checkSupported(RateLimitPolicy policy) {
		if (policy.algorithm() == Algorithm.SLIDING_LOG) {
			throw unsupported(policy);
		}
		if (policy.algorithm() == Algorithm.CONCURRENCY && policy.limit() > ConcurrencyItems.MOST_SLOTS) {
			throw new IllegalArgumentException("'limit' must be at most " + ConcurrencyItems.MOST_SLOTS + " for "
					+ "CONCURRENCY with the DynamoDB store (policy '" + policy.name() + "'), whose slots held are one "
					+ "item of at most 400 KB, but was " + policy.limit() + "; use the Redis store for more");
		}
	}

	/**
	 * Refuse a key shared by every request whose limit is more than one item takes: every decision writes the key's
	 * one item, and past about {@value #ITEM_WRITES_PER_SECOND} writes a second DynamoDB throttles them all.
	 */
	@Override
	public void checkSharedKey(RateLimitPolicy policy) {
		double perSecond = policy.limit() * 1_000.0 / policy.window().toMillis();
		if (perSecond > ITEM_WRITES_PER_SECOND) {
			throw new IllegalArgumentException("'limit' " + policy.limit() + " per '" + policy.describeWindow()
					+ "' is " + Math.round(perSecond) + " a second for a key shared by every request: with the "
					+ "DynamoDB store that key is one item, and one item takes about 1,000 writes a second (one per "
					+ "decision, admitted or not). Use the Redis store, give the quota a key per tenant or region, or "
					+ "set a limit of at most 1,000 a second");
		}
	}

	static IllegalArgumentException unsupported(RateLimitPolicy policy) {
		return new IllegalArgumentException("'algorithm' SLIDING_LOG is not supported by the DynamoDB store (policy '"
				+ policy.name() + "'): its log would be read and rewritten on every request, up to DynamoDB's 400 KB "
				+ "item size; use SLIDING_COUNTER, which keeps a count per window");
	}

	@Override
	public Decision tryAcquire(RateLimitPolicy policy, String key, long cost) {
		return DynamoDbCalls.join(this.items.decide(this.calls, policy, key, cost, now()));
	}

	/** One call per acquisition, all at one time, so that each refund finds the window that counted it. */
	@Override
	public Reservation tryAcquireAll(List<Acquisition> acquisitions) {
		long now = now();
		return OneByOne.tryAcquireAll(acquisitions, () -> now, (acquisition, at) -> DynamoDbCalls.join(
				this.items.decide(this.calls, acquisition.policy(), acquisition.key(), acquisition.cost(), at)), this);
	}

	/**
	 * Decide as {@link #tryAcquireAll} does: on the asynchronous client if the store was given one, every acquisition
	 * at once, else on the calling thread.
	 */
	@Override
	public CompletionStage<Reservation> tryAcquireAllAsync(List<Acquisition> acquisitions) {
		DynamoDbCalls async = this.asyncCalls;
		if (async == null) {
			return RateLimitStore.super.tryAcquireAllAsync(acquisitions);
		}
		long now = now();
		return DynamoDbCalls.unwrapped(OneByOne.tryAcquireAllAsync(acquisitions, () -> now, (acquisition,
				at) -> this.items.decide(async, acquisition.policy(), acquisition.key(), acquisition.cost(), at), this));
	}

	/**
	 * Give the units back with one conditional ADD: to the window item that counted them, or out of the bucket's
	 * level. A window that is gone or holds less gives nothing back.
	 */
	@Override
	public void refund(Acquisition acquisition, long countedAtMillis) {
		DynamoDbCalls.join(this.items.refund(this.calls, acquisition, countedAtMillis));
	}

	/** Give back as {@link #refundAll} does: on the asynchronous client if the store was given one, all at once. */
	@Override
	public CompletionStage<Void> refundAllAsync(List<Acquisition> acquisitions, long[] countedAtMillis) {
		DynamoDbCalls async = this.asyncCalls;
		if (async == null) {
			return RateLimitStore.super.refundAllAsync(acquisitions, countedAtMillis);
		}
		CompletableFuture<?>[] given = new CompletableFuture<?>[acquisitions.size()];
		for (int i = 0; i < given.length; i++) {
			given[i] = this.items.refund(async, acquisitions.get(i), countedAtMillis[i]);
		}
		return DynamoDbCalls.unwrapped(CompletableFuture.allOf(given));
	}

	/**
	 * {@inheritDoc}
	 * <p>
	 * One conditional update: the window's count, or the bucket's level (counted in the same units), grows by the
	 * extra units, if the item is still there; a bucket's expiry is pushed back by the time the extra takes to drain.
	 */
	@Override
	public void charge(Acquisition acquisition, long countedAtMillis) {
		DynamoDbCalls.join(this.items.charge(this.calls, acquisition, countedAtMillis, now()));
	}

	@Override
	public long currentTimeMillis() {
		return now();
	}

	/**
	 * {@inheritDoc}
	 * <p>
	 * In one item, {@code <prefix>#changes}, that {@link #clear()} keeps.
	 */
	@Override
	public SharedChanges sharedChanges() {
		return this.sharedChanges;
	}

	@Override
	public void reset(RateLimitPolicy policy, String key) {
		List<String> items = this.items.itemsToReset(policy, key, now());
		this.calls.delete(items);
		this.items.forget(items);
		this.resets.reset(policy, key);
	}

	/**
	 * Delete every item under this store's key prefix (a {@code Scan} of the table, so for tests and small tables):
	 * other items of the table stay, and so do {@code <prefix>#changes} and {@code <prefix>#resets}. Every instance
	 * listening for resets forgets all its cached denials.
	 * @throws io.github.ratelimit.store.RateLimitStoreException if DynamoDB cannot be reached
	 */
	@Override
	public void clear() {
		this.calls.deleteWithPrefix(this.keyPrefix + ":");
		this.items.forget(null);
		this.resets.clear();
	}

	/**
	 * {@inheritDoc}
	 * <p>
	 * Every {@link #reset} and {@link #clear} through an instance sharing the table and key prefix adds one to a
	 * generation kept in the item {@code <prefix>#resets} (which {@link #clear()} keeps), with the reset's policy
	 * name, variant and key, in the same {@code UpdateItem} that follows the reset. From the first listener on, this
	 * instance reads that item, strongly consistent, once per {@linkplain Builder#resetPollInterval poll interval}
	 * on a daemon thread: one reset since its last read is told as {@link ResetListener#onReset}, several (or a
	 * clear) as {@link ResetListener#onClear}. Best effort: a reset whose generation could not be written is logged
	 * at WARN and stands (the reset itself is done); a failed read is logged and tried again at the next interval.
	 * {@link #close()} stops the reading.
	 */
	@Override
	public void addResetListener(ResetListener listener) {
		this.resets.addListener(listener);
	}

	/** Return the reset generation this instance last read, {@code -1} before its first read: for tests. */
	long resetGenerationSeen() {
		return this.resets.seen();
	}

	/**
	 * Stop reading the resets made through other instances; idempotent. The clients are the application's and stay
	 * open. Decisions still work after it, but this instance no longer hears of the others' resets.
	 */
	@Override
	public void close() {
		this.resets.close();
	}

	@Override
	public boolean isPartitioned() {
		return true;
	}

	@Override
	public String partitionOf(RateLimitPolicy policy, String key) {
		int hash = 31 * policy.name().hashCode() + key.hashCode();
		return GROUP_NAMES[Math.floorMod(hash ^ (hash >>> 16), KEY_GROUPS)];
	}

	/** Return the application clock's time, never earlier than a time this store already used. */
	private long now() {
		long now = this.clock.currentTimeMillis();
		return this.latest.accumulateAndGet(now, Math::max);
	}

	@Override
	public String toString() {
		return "DynamoDbRateLimitStore[table " + this.table + "]";
	}

	private static String[] groupNames() {
		String[] names = new String[KEY_GROUPS];
		for (int i = 0; i < KEY_GROUPS; i++) {
			names[i] = "keys-" + i;
		}
		return names;
	}

	/**
	 * Builder for {@link DynamoDbRateLimitStore}.
	 */
	public static final class Builder {

		private final DynamoDbClient client;

		private String table = DEFAULT_TABLE;

		private String keyPrefix = DEFAULT_KEY_PREFIX;

		private Duration timeout = Duration.ofMillis(DEFAULT_TIMEOUT_MILLIS);

		private TimeSource clock = TimeSource.system();

		private boolean createTable;

		private @Nullable DynamoDbAsyncClient asyncClient;

		private Duration resetPollInterval = Duration.ofMillis(DEFAULT_RESET_POLL_INTERVAL_MILLIS);

		private Builder(DynamoDbClient client) {
			this.client = client;
		}

		/**
		 * Set the table; {@value #DEFAULT_TABLE} by default.
		 * @param table the table name
		 * @return this builder
		 */
		public Builder table(String table) {
			if (table.isBlank()) {
				throw new IllegalArgumentException("'table' must not be blank");
			}
			this.table = table;
			return this;
		}

		/**
		 * Set the prefix of every partition key; {@value #DEFAULT_KEY_PREFIX} by default. It cannot contain {@code :},
		 * so that no store's prefix starts another's keys.
		 * @param keyPrefix the prefix
		 * @return this builder
		 */
		public Builder keyPrefix(String keyPrefix) {
			if (keyPrefix.isBlank() || keyPrefix.indexOf(':') >= 0) {
				throw new IllegalArgumentException(
						"'keyPrefix' must not be blank nor contain ':' (which ends it) but was '" + keyPrefix + "'");
			}
			this.keyPrefix = keyPrefix;
			return this;
		}

		/**
		 * Set how long a decision may take, all its calls included, before it fails; 500ms by default.
		 * @param timeout the timeout, positive
		 * @return this builder
		 */
		public Builder timeout(Duration timeout) {
			if (timeout.isNegative() || timeout.isZero()) {
				throw new IllegalArgumentException("'timeout' must be positive but was " + timeout);
			}
			this.timeout = timeout;
			return this;
		}

		/**
		 * Set the clock windows and buckets are computed with; the system clock by default.
		 * @param clock the clock
		 * @return this builder
		 */
		public Builder clock(TimeSource clock) {
			this.clock = clock;
			return this;
		}

		/**
		 * Set whether {@link #start()} creates the table when it is missing (on-demand capacity, TTL on
		 * {@code ttl} where the server implements it); off by default.
		 * @param createTable whether to create the table
		 * @return this builder
		 */
		public Builder createTable(boolean createTable) {
			this.createTable = createTable;
			return this;
		}

		/**
		 * Set the asynchronous client that {@link DynamoDbRateLimitStore#tryAcquireAllAsync} decides on, so that no
		 * thread waits for DynamoDB; without one, it decides on the calling thread. Its own retry strategy is not used
		 * for decisions either.
		 * @param asyncClient the asynchronous DynamoDB client, for the same endpoint and table as the other
		 * @return this builder
		 */
		public Builder asyncClient(@Nullable DynamoDbAsyncClient asyncClient) {
			this.asyncClient = asyncClient;
			return this;
		}

		/**
		 * Set how often this instance reads the resets made through the other instances sharing the table and key
		 * prefix (see {@link DynamoDbRateLimitStore#addResetListener}): how soon, after an operator resets a key
		 * through one instance, the others stop rejecting it from their deny caches. One strongly consistent
		 * {@code GetItem} per interval and instance (half a read unit each); 1 second by default.
		 * @param resetPollInterval the interval, positive
		 * @return this builder
		 * @since 0.3.0
		 */
		public Builder resetPollInterval(Duration resetPollInterval) {
			if (resetPollInterval.isNegative() || resetPollInterval.isZero()) {
				throw new IllegalArgumentException("'resetPollInterval' must be positive but was " + resetPollInterval);
			}
			this.resetPollInterval = resetPollInterval;
			return this;
		}

		/**
		 * Build the store.
		 * @return the store
		 */
		public DynamoDbRateLimitStore build() {
			return new DynamoDbRateLimitStore(this);
		}

	}

}
