package io.github.ratelimit.dynamodb;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;

import io.github.ratelimit.RateLimitPolicy;
import io.github.ratelimit.store.ResetListener;
import io.github.ratelimit.store.StoreKeys;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import software.amazon.awssdk.services.dynamodb.model.AttributeValue;

/**
 * Tells every instance sharing a key prefix of the resets made through any of them, through one item,
 * {@code <prefix>#resets} (outside the items {@code clear()} deletes, which start with {@code <prefix>:}): each reset
 * or clear adds one to its generation {@code g} and names itself in {@code l} (the policy's name, its variant and the
 * key, each escaped with {@link StoreKeys#escape} and joined with {@code :}; {@code ""} for a clear), in one
 * {@code UpdateItem}. Each instance with a listener reads the item, strongly consistent, once per poll interval: a
 * generation one ahead of the last it read is the reset {@code l} names, forgotten under its policy's name and variant;
 * more than one ahead (several resets between two reads), a clear, or an item that went back, forgets everything.
 * <p>
 * Best effort, as pub/sub is on Redis: a reset whose generation could not be written is logged and stands in the
 * store, and until an instance's first read succeeds it has no generation to compare with (if earlier reads failed,
 * that first read forgets everything, since resets may have been missed meanwhile).
 */
final class DynamoDbResets implements AutoCloseable {

	private static final Logger logger = LoggerFactory.getLogger(DynamoDbRateLimitStore.class);

	/** At most one warning this often about failing reads; the others go to DEBUG. */
	private static final long WARN_EVERY_NANOS = TimeUnit.MINUTES.toNanos(1);

	private final DynamoDbCalls calls;

	private final String pk;

	private final Duration pollInterval;

	private final List<ResetListener> listeners = new CopyOnWriteArrayList<>();

	private @Nullable ScheduledExecutorService poller;

	private boolean closed;

	/** The generation of the last successful read, {@code -1} before the first; read and written by the poller. */
	private volatile long seen = -1;

	private boolean failedBeforeFirstRead;

	private long lastWarnedAt;

	private boolean warned;

	private long failuresNotWarned;

	DynamoDbResets(DynamoDbCalls calls, String keyPrefix, Duration pollInterval) {
		this.calls = calls;
		this.pk = keyPrefix + "#resets";
		this.pollInterval = pollInterval;
	}

	/** Listen, reading the item from the first listener on, in the background. */
	synchronized void addListener(ResetListener listener) {
		this.listeners.add(listener);
		if (this.poller == null && !this.closed) {
			ScheduledExecutorService poller = Executors.newSingleThreadScheduledExecutor((task) -> {
				Thread thread = new Thread(task, "ratelimit-dynamodb-resets-" + this.pk);
				thread.setDaemon(true);
				return thread;
			});
			poller.scheduleWithFixedDelay(this::poll, 0, this.pollInterval.toNanos(), TimeUnit.NANOSECONDS);
			this.poller = poller;
		}
	}

	/** Tell the other instances of a reset made in the store; a failure is logged, the reset stands. */
	void reset(RateLimitPolicy policy, String key) {
		bump(encode(policy.name(), policy.variant(), key));
	}

	/** Tell the other instances that every counter was deleted. */
	void clear() {
		bump("");
	}

	private void bump(String last) {
		try {
			DynamoDbCalls.join(this.calls.update(this.pk, "ADD #g :one SET #l = :last",
					"attribute_exists(#g) OR attribute_not_exists(#g)", Map.of("#g", "g", "#l", "l"),
					Map.of(":one", DynamoDbCalls.number(1), ":last", AttributeValue.fromS(last)),
					this.calls.deadline()));
		}
		catch (RuntimeException ex) {
			logger.warn("Could not tell the other instances of a rate limit reset ({}): it is done in DynamoDB, "
					+ "but they forget their cached denials only at the retry times they hold", ex.getMessage());
		}
	}

	/** One read, telling the listeners what changed since the last: never throws, so the next one is scheduled. */
	private void poll() {
		Map<String, AttributeValue> item;
		try {
			item = DynamoDbCalls.join(this.calls.get(this.pk, this.calls.deadline()));
		}
		catch (RuntimeException ex) {
			failed(ex);
			return;
		}
		recovered();
		long generation;
		try {
			generation = DynamoDbCalls.number(item, "g", 0);
		}
		catch (NumberFormatException ex) {
			logger.warn("The item '{}' of the rate limit resets holds no generation: {}", this.pk, ex.getMessage());
			return;
		}
		long previous = this.seen;
		if (previous < 0) {
			if (this.failedBeforeFirstRead) {
				// Resets may have been made while this instance could not read: forget everything once.
				tell(ResetListener::onClear);
			}
		}
		else if (generation != previous) {
			AttributeValue last = item.get("l");
			String[] reset = (generation == previous + 1 && last != null && last.s() != null) ? decode(last.s())
					: null;
			if (reset != null) {
				tell((listener) -> listener.onReset(reset[0], reset[1], reset[2]));
			}
			else {
				// Several resets since the last read, a clear, or an item deleted and written anew.
				tell(ResetListener::onClear);
			}
		}
		this.seen = generation;
	}

	private void tell(Consumer<ResetListener> event) {
		for (ResetListener listener : this.listeners) {
			try {
				event.accept(listener);
			}
			catch (RuntimeException ex) {
				logger.warn("A rate limit reset listener failed", ex);
			}
		}
	}

	private void failed(RuntimeException ex) {
		if (this.seen < 0) {
			this.failedBeforeFirstRead = true;
		}
		long now = System.nanoTime();
		if (!this.warned || now - this.lastWarnedAt >= WARN_EVERY_NANOS) {
			long notWarned = this.failuresNotWarned;
			this.warned = true;
			this.lastWarnedAt = now;
			this.failuresNotWarned = 0;
			logger.warn("Could not read the rate limit resets made through other instances ({}{}); read again every "
					+ "{}: until then their resets leave this instance's cached denials as they are", ex.getMessage(),
					(notWarned > 0) ? ", " + notWarned + " more failures since the last warning" : "",
					this.pollInterval);
		}
		else {
			this.failuresNotWarned++;
			logger.debug("Could not read the rate limit resets made through other instances", ex);
		}
	}

	private void recovered() {
		if (this.warned) {
			this.warned = false;
			this.failuresNotWarned = 0;
			logger.info("Reading the rate limit resets made through other instances again");
		}
	}

	/** The generation of the last successful read, {@code -1} before the first: for tests. */
	long seen() {
		return this.seen;
	}

	static String encode(String name, String variant, String key) {
		return StoreKeys.escape(name) + ":" + StoreKeys.escape(variant) + ":" + StoreKeys.escape(key);
	}

	/** The name, variant and key of an encoded reset, or {@code null} if it is none (a clear). */
	static String @Nullable [] decode(String last) {
		String[] parts = last.split(":", -1);
		if (parts.length != 3) {
			return null;
		}
		for (int i = 0; i < parts.length; i++) {
			String part = unescape(parts[i]);
			if (part == null) {
				return null;
			}
			parts[i] = part;
		}
		return parts;
	}

	/** Undo {@link StoreKeys#escape}: {@code %XX}, and {@code %uXXXX} for a lone surrogate. */
	static @Nullable String unescape(String value) {
		if (value.indexOf('%') < 0) {
			return value;
		}
		StringBuilder decoded = new StringBuilder(value.length());
		int i = 0;
		while (i < value.length()) {
			char c = value.charAt(i);
			if (c != '%') {
				decoded.append(c);
				i++;
				continue;
			}
			boolean unit = i + 1 < value.length() && value.charAt(i + 1) == 'u';
			int start = unit ? i + 2 : i + 1;
			int end = start + (unit ? 4 : 2);
			if (end > value.length()) {
				return null;
			}
			int code = 0;
			for (int j = start; j < end; j++) {
				int digit = Character.digit(value.charAt(j), 16);
				if (digit < 0) {
					return null;
				}
				code = code * 16 + digit;
			}
			decoded.append((char) code);
			i = end;
		}
		return decoded.toString();
	}

	/** Stop reading; idempotent. */
	@Override
	public synchronized void close() {
		this.closed = true;
		ScheduledExecutorService poller = this.poller;
		if (poller != null) {
			poller.shutdownNow();
			this.poller = null;
		}
	}

}
