package io.github.ratelimit.engine;

import java.time.Duration;
import java.util.Iterator;
import java.util.concurrent.Callable;
import java.util.concurrent.ConcurrentHashMap;

import org.jspecify.annotations.Nullable;

import org.springframework.cache.support.AbstractValueAdaptingCache;

/**
 * A small bounded cache whose entries expire a fixed time after they were written: what known tenants' limits are kept
 * in when the application has no Caffeine, and names the tenants' source does not know. At its size, a write drops expired entries, then others down to nine tenths.
 */
final class ExpiringCache extends AbstractValueAdaptingCache {

	private final String name;

	private final int maximumSize;

	private final long timeToLiveNanos;

	private final ConcurrentHashMap<Object, Entry> entries = new ConcurrentHashMap<>();

	ExpiringCache(String name, int maximumSize, Duration timeToLive) {
		super(false);
		this.name = name;
		this.maximumSize = maximumSize;
		this.timeToLiveNanos = timeToLive.toNanos();
	}

	@Override
	public String getName() {
		return this.name;
	}

	@Override
	public Object getNativeCache() {
		return this.entries;
	}

	@Override
	protected @Nullable Object lookup(Object key) {
		Entry entry = this.entries.get(key);
		if (entry == null) {
			return null;
		}
		if (System.nanoTime() - entry.writtenAt >= this.timeToLiveNanos) {
			this.entries.remove(key, entry);
			return null;
		}
		return entry.value;
	}

	@Override
	@SuppressWarnings("unchecked")
	public <T> @Nullable T get(Object key, Callable<T> valueLoader) {
		Object value = lookup(key);
		if (value != null) {
			return (T) fromStoreValue(value);
		}
		try {
			T loaded = valueLoader.call();
			put(key, loaded);
			return loaded;
		}
		catch (Exception ex) {
			throw new ValueRetrievalException(key, valueLoader, ex);
		}
	}

	@Override
	public void put(Object key, @Nullable Object value) {
		if (this.entries.size() >= this.maximumSize) {
			makeRoom();
		}
		this.entries.put(key, new Entry(toStoreValue(value), System.nanoTime()));
	}

	/** Drop the expired entries, then others down to nine tenths of the size, so that a full cache scans rarely. */
	private void makeRoom() {
		long now = System.nanoTime();
		this.entries.values().removeIf((entry) -> now - entry.writtenAt >= this.timeToLiveNanos);
		Iterator<Object> keys = this.entries.keySet().iterator();
		while (this.entries.size() >= this.maximumSize - this.maximumSize / 10 && keys.hasNext()) {
			keys.next();
			keys.remove();
		}
	}

	@Override
	public void evict(Object key) {
		this.entries.remove(key);
	}

	@Override
	public void clear() {
		this.entries.clear();
	}

	private record Entry(Object value, long writtenAt) {
	}

}
