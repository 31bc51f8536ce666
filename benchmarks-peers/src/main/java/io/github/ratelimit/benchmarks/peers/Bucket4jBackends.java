package io.github.ratelimit.benchmarks.peers;

import static java.nio.charset.StandardCharsets.UTF_8;

import java.time.Duration;

import com.giffing.bucket4j.spring.boot.starter.config.cache.AbstractCacheResolverTemplate;
import com.giffing.bucket4j.spring.boot.starter.config.cache.SyncCacheResolver;
import io.github.bucket4j.distributed.ExpirationAfterWriteStrategy;
import io.github.bucket4j.distributed.proxy.AbstractProxyManager;
import io.github.bucket4j.redis.lettuce.cas.LettuceBasedProxyManager;
import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisURI;
import redis.clients.jedis.JedisPool;
import redis.clients.jedis.JedisPoolConfig;

import org.springframework.beans.factory.annotation.Value;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBooleanProperty;
import org.springframework.cache.annotation.EnableCaching;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.context.annotation.Profile;

/**
 * The beans bucket4j-spring-boot-starter 0.14.0-RC1 expects the application to declare for each back end, as its
 * examples do, built from {@code spring.data.redis.host/port}.
 */
class Bucket4jBackends {

	/**
	 * In memory (examples/caffeine): Spring's cache abstraction on, so that Spring Boot creates the JCache
	 * {@code CacheManager} (Caffeine's provider, {@code spring.cache.jcache.provider}) holding the {@code buckets}
	 * cache; bucket4j's JCacheBucket4jConfiguration ({@code cache-to-use: jcache}) uses it.
	 */
	@Configuration(proxyBeanMethods = false)
	@Profile("bucket4j-memory")
	@EnableCaching
	static class Memory {

	}

	/**
	 * Jedis (examples/redis-jedis, JedisConfiguration): a {@code JedisPool} bean, which JedisBucket4jConfiguration
	 * ({@code cache-to-use: redis-jedis}) needs. The example's pool sizes (128 connections, 16 kept idle); its
	 * test-on-borrow and test-on-return (a PING before and after every use) are off unless
	 * {@code bench.jedis.test-on-borrow=true}, so as not to charge Bucket4j for a choice of the example.
	 */
	@Configuration(proxyBeanMethods = false)
	@Profile("bucket4j-jedis")
	static class Jedis {

		@Bean(destroyMethod = "close")
		JedisPool jedisPool(@Value("${spring.data.redis.host:localhost}") String host,
				@Value("${spring.data.redis.port:6379}") int port,
				@Value("${bench.jedis.test-on-borrow:false}") boolean testOnBorrow) {
			JedisPoolConfig config = new JedisPoolConfig();
			config.setMaxTotal(128);
			config.setMaxIdle(128);
			config.setMinIdle(16);
			config.setTestOnBorrow(testOnBorrow);
			config.setTestOnReturn(testOnBorrow);
			config.setTestWhileIdle(true);
			config.setMinEvictableIdleDuration(Duration.ofSeconds(60));
			config.setTimeBetweenEvictionRuns(Duration.ofSeconds(30));
			config.setNumTestsPerEvictionRun(3);
			config.setBlockWhenExhausted(true);
			return new JedisPool(config, host, port);
		}

	}

	/**
	 * Lettuce (examples/redis-lettuce, LettuceConfiguraiton): a {@code RedisClient} bean. The starter's own Lettuce
	 * back end (LettuceBucket4jConfiguration, {@code cache-to-use: redis-lettuce}) is asynchronous only and is created
	 * only when a reactive filter (webflux, gateway) is configured; the servlet filter needs a
	 * {@code SyncCacheResolver}, which its README lets the application provide ("you can implement the
	 * SyncCacheResolver ... by yourself"). This one is its LettuceCacheResolver (same proxy manager, same expiration)
	 * used synchronously, as its JedisCacheResolver is.
	 */
	@Configuration(proxyBeanMethods = false)
	@Profile("bucket4j-lettuce")
	static class Lettuce {

		@Bean(destroyMethod = "shutdown")
		RedisClient bucket4jRedisClient(@Value("${spring.data.redis.host:localhost}") String host,
				@Value("${spring.data.redis.port:6379}") int port) {
			return RedisClient.create(RedisURI.create(host, port));
		}

		/**
		 * Off with {@code bench.bucket4j.lettuce-sync-resolver=false}: then the starter's documented set-up alone
		 * applies, and no filter limits {@code /peer}.
		 */
		@Bean
		@ConditionalOnBooleanProperty(name = "bench.bucket4j.lettuce-sync-resolver", matchIfMissing = true)
		SyncCacheResolver lettuceSyncCacheResolver(RedisClient bucket4jRedisClient) {
			return new LettuceSyncCacheResolver(bucket4jRedisClient);
		}

	}

	static final class LettuceSyncCacheResolver extends AbstractCacheResolverTemplate<byte[]>
			implements SyncCacheResolver {

		private final RedisClient redisClient;

		LettuceSyncCacheResolver(RedisClient redisClient) {
			this.redisClient = redisClient;
		}

		@Override
		public boolean isAsync() {
			return false;
		}

		@Override
		public AbstractProxyManager<byte[]> getProxyManager(String cacheName) {
			return LettuceBasedProxyManager.builderFor(this.redisClient)
				.withExpirationStrategy(
						ExpirationAfterWriteStrategy.basedOnTimeForRefillingBucketUpToMax(Duration.ofSeconds(10)))
				.build();
		}

		@Override
		public byte[] castStringToCacheKey(String key) {
			return key.getBytes(UTF_8);
		}

	}

}
