package io.github.ratelimit.redis;

import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

import io.github.ratelimit.RateLimitPolicy;
import io.github.ratelimit.store.ResetListener;
import org.jspecify.annotations.Nullable;

import org.springframework.data.redis.connection.Message;
import org.springframework.data.redis.connection.MessageListener;
import org.springframework.data.redis.connection.RedisConnection;
import org.springframework.data.redis.connection.RedisConnectionFactory;
import org.springframework.data.redis.listener.ChannelTopic;
import org.springframework.data.redis.listener.RedisMessageListenerContainer;

/**
 * Tells every instance sharing a key prefix of the resets made through any of them, over Redis pub/sub
 * ({@code <prefix>:resets}), so that each forgets its cached denials of the key. A message is the policy's name,
 * variant and the key, as UTF-16 code units so that any key comes back as it was sent; {@code C} alone means every counter was
 * cleared. Best effort, as pub/sub is: a message lost (an instance disconnected at that moment, or not yet
 * subscribed because Redis was down when it started) leaves that instance rejecting the key until the retry time it
 * cached, as before.
 */
final class ResetBroadcast implements MessageListener, AutoCloseable {

	private static final System.Logger logger = System.getLogger(ResetBroadcast.class.getName());

	private static final char RESET = 'R';

	private static final char CLEAR = 'C';

	private final RedisConnectionFactory connectionFactory;

	private final byte[] channel;

	private final List<ResetListener> listeners = new CopyOnWriteArrayList<>();

	private @Nullable RedisMessageListenerContainer container;

	private @Nullable Thread subscriber;

	private boolean closed;

	ResetBroadcast(RedisConnectionFactory connectionFactory, String keyPrefix) {
		this.connectionFactory = connectionFactory;
		this.channel = (keyPrefix + ":resets").getBytes(StandardCharsets.UTF_8);
	}

	/**
	 * Listen, subscribing with the first listener, in the background: a Redis that is down at start-up must not keep
	 * the application from starting, so the subscription is tried again every few seconds until it holds (and the
	 * container then recovers from lost connections by itself).
	 */
	synchronized void addListener(ResetListener listener) {
		this.listeners.add(listener);
		if (this.subscriber == null && !this.closed) {
			Thread subscriber = new Thread(this::subscribe, "ratelimit-redis-resets");
			subscriber.setDaemon(true);
			subscriber.start();
			this.subscriber = subscriber;
		}
	}

	private void subscribe() {
		long backoff = 1_000;
		while (true) {
			RedisMessageListenerContainer container = new RedisMessageListenerContainer();
			container.setConnectionFactory(this.connectionFactory);
			container.addMessageListener(this, new ChannelTopic(new String(this.channel, StandardCharsets.UTF_8)));
			try {
				container.afterPropertiesSet();
				container.start();
			}
			catch (RuntimeException ex) {
				destroy(container);
				synchronized (this) {
					if (this.closed) {
						return;
					}
				}
				logger.log(System.Logger.Level.DEBUG, () -> "Could not subscribe to rate limit resets yet: " + ex);
				try {
					Thread.sleep(backoff);
				}
				catch (InterruptedException interrupted) {
					return;
				}
				backoff = Math.min(backoff * 2, 30_000);
				continue;
			}
			synchronized (this) {
				if (this.closed) {
					destroy(container);
				}
				else {
					this.container = container;
				}
			}
			return;
		}
	}

	void reset(RateLimitPolicy policy, String key) {
		if (policy.name().length() <= Character.MAX_VALUE && policy.variant().length() <= Character.MAX_VALUE) {
			publish(encode(policy.name(), policy.variant(), key));
		}
	}

	void clear() {
		publish(bytes(String.valueOf(CLEAR)));
	}

	private void publish(byte[] message) {
		try (RedisConnection connection = this.connectionFactory.getConnection()) {
			connection.publish(this.channel, message);
		}
		catch (RuntimeException ex) {
			logger.log(System.Logger.Level.WARNING, () -> "Could not tell the other instances of a rate limit reset ("
					+ ex.getMessage() + "): they forget their cached denials of the key at the retry time they hold");
		}
	}

	@Override
	public void onMessage(Message message, byte @Nullable [] pattern) {
		String text = text(message.getBody());
		if (text.length() == 1 && text.charAt(0) == CLEAR) {
			this.listeners.forEach(ResetListener::onClear);
			return;
		}
		String[] fields = decode(text);
		if (fields != null) {
			this.listeners.forEach((listener) -> listener.onReset(fields[0], fields[1], fields[2]));
		}
	}

	/** {@code R}, then the name and the variant each after its length in one char, then the key. */
	static byte[] encode(String name, String variant, String key) {
		return bytes(RESET + String.valueOf((char) name.length()) + name + (char) variant.length() + variant + key);
	}

	/** Two bytes per UTF-16 code unit, as they are: a charset would replace lone surrogates. */
	static byte[] bytes(String text) {
		byte[] bytes = new byte[2 * text.length()];
		for (int i = 0; i < text.length(); i++) {
			bytes[2 * i] = (byte) (text.charAt(i) >>> 8);
			bytes[2 * i + 1] = (byte) text.charAt(i);
		}
		return bytes;
	}

	static String text(byte[] bytes) {
		char[] chars = new char[bytes.length / 2];
		for (int i = 0; i < chars.length; i++) {
			chars[i] = (char) (((bytes[2 * i] & 0xFF) << 8) | (bytes[2 * i + 1] & 0xFF));
		}
		return new String(chars);
	}

	static String @Nullable [] decode(String text) {
		if (text.length() < 3 || text.charAt(0) != RESET) {
			return null;
		}
		int nameEnd = 2 + text.charAt(1);
		if (nameEnd >= text.length()) {
			return null;
		}
		int variantEnd = nameEnd + 1 + text.charAt(nameEnd);
		if (variantEnd > text.length()) {
			return null;
		}
		return new String[] { text.substring(2, nameEnd), text.substring(nameEnd + 1, variantEnd),
				text.substring(variantEnd) };
	}

	@Override
	public synchronized void close() {
		this.closed = true;
		Thread subscriber = this.subscriber;
		if (subscriber != null) {
			subscriber.interrupt();
		}
		RedisMessageListenerContainer container = this.container;
		if (container != null) {
			destroy(container);
			this.container = null;
		}
	}

	private static void destroy(RedisMessageListenerContainer container) {
		try {
			container.destroy();
		}
		catch (Exception ex) {
			// Closing: the subscription goes with the connection.
		}
	}

}
