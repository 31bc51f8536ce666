package io.github.ratelimit.redis;

import java.nio.charset.StandardCharsets;
import java.time.Duration;

import io.github.ratelimit.Algorithm;
import io.github.ratelimit.RateLimitPolicy;
import io.github.ratelimit.store.StoreKeys;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

class RedisKeysTests {

	private final RedisKeys keys = new RedisKeys("ratelimit");

	@Test
	void keysCarryThePrefixAHashTagOfPolicyAndKeyTheAlgorithmAndItsParameters() {
		assertThat(key(policy("orders", Algorithm.FIXED), "alice")).isEqualTo("ratelimit:{orders:alice}:fx:1000");
		assertThat(key(policy("orders", Algorithm.SLIDING_COUNTER), "alice"))
			.isEqualTo("ratelimit:{orders:alice}:swc:1000");
		assertThat(key(policy("orders", Algorithm.TOKEN_BUCKET), "alice"))
			.isEqualTo("ratelimit:{orders:alice}:tb:1000");
		assertThat(key(policy("orders", Algorithm.LEAKY_BUCKET), "alice")).as("the same meter")
			.isEqualTo("ratelimit:{orders:alice}:tb:1000");
		byte[][] log = this.keys.keys(policy("orders", Algorithm.SLIDING_LOG), "alice");
		assertThat(new String(log[0], StandardCharsets.UTF_8)).isEqualTo("ratelimit:{orders:alice}:log:1000");
		assertThat(new String(log[1], StandardCharsets.UTF_8)).isEqualTo("ratelimit:{orders:alice}:sum:1000");
	}

	@Test
	void aChangeOfLimitOrBurstKeepsTheKeysWhileAChangeOfAlgorithmOrWindowGivesOthers() {
		RateLimitPolicy base = RateLimitPolicy.builder("orders")
			.algorithm(Algorithm.TOKEN_BUCKET)
			.limit(10)
			.window(Duration.ofHours(1))
			.burst(10L)
			.build();
		String original = key(base, "alice");
		assertThat(key(base.toBuilder().limit(100).build(), "alice")).as("counts carried over").isEqualTo(original);
		assertThat(key(base.toBuilder().burst(1L).build(), "alice")).as("level clamped").isEqualTo(original);
		assertThat(key(base.toBuilder().window(Duration.ofMinutes(1)).build(), "alice")).isNotEqualTo(original);
		assertThat(key(base.toBuilder().algorithm(Algorithm.FIXED).build(), "alice")).isNotEqualTo(original);
		assertThat(key(base.toBuilder().algorithm(Algorithm.LEAKY_BUCKET).build(), "alice"))
			.as("the same meter keeps its state").isEqualTo(original);
		assertThat(RedisKeys.sameState(base, base.toBuilder().limit(100).burst(3L).build())).isTrue();
	}

	@Test
	void aVariantNamesItselfAfterTheParametersEncodedAndBounded() {
		RateLimitPolicy quota = policy("quota", Algorithm.FIXED);
		assertThat(key(quota.toBuilder().variant("gold").build(), "k")).isEqualTo("ratelimit:{quota:k}:fx:1000:v=gold");
		assertThat(key(quota.toBuilder().variant("a:b}").build(), "k"))
			.isEqualTo("ratelimit:{quota:k}:fx:1000:v=a%3Ab%7D");
		assertThat(key(quota.toBuilder().variant("t".repeat(10_000)).build(), "k"))
			.startsWith("ratelimit:{quota:k}:fx:1000:v=" + StoreKeys.HASHED_PREFIX)
			.hasSizeLessThan(100);
		assertThat(RedisKeys.sameState(quota, quota.toBuilder().variant("gold").build())).isFalse();
	}

	@Test
	void aWindowKeepsItsCountsWhenOnlyTheLimitChanges() {
		RateLimitPolicy log = RateLimitPolicy.builder("orders")
			.algorithm(Algorithm.SLIDING_LOG)
			.limit(10)
			.window(Duration.ofMinutes(1))
			.build();
		assertThat(key(log.toBuilder().limit(20).build(), "alice")).isEqualTo(key(log, "alice"));
		RateLimitPolicy fixed = log.toBuilder().algorithm(Algorithm.FIXED).build();
		assertThat(key(fixed.toBuilder().limit(20).build(), "alice")).isEqualTo(key(fixed, "alice"));
		assertThat(key(log.toBuilder().window(Duration.ofMinutes(2)).build(), "alice")).isNotEqualTo(key(log, "alice"));
	}

	@Test
	void bracesCannotEndTheHashTagEarly() {
		String key = key(policy("orders", Algorithm.FIXED), "}{evil}");
		assertThat(key).isEqualTo("ratelimit:{orders:%7D%7Bevil%7D}:fx:1000");
		assertThat(key.indexOf('}')).isEqualTo(key.lastIndexOf('}'));
	}

	@Test
	void separatorsAreEncodedSoPolicyAndKeyNeverCollide() {
		String a = key(policy("a:b", Algorithm.FIXED), "c");
		String b = key(policy("a", Algorithm.FIXED), "b:c");
		assertThat(a).isNotEqualTo(b);
		assertThat(StoreKeys.escape("100%:#")).isEqualTo("100%25%3A%23");
	}

	@Test
	void controlCharactersAreEncodedAndUnicodeIsKept() {
		assertThat(StoreKeys.escape("a\nb\r\u0000c\u007f")).isEqualTo("a%0Ab%0D%00c%7F");
		assertThat(StoreKeys.escape("ユーザー😀")).isEqualTo("ユーザー😀");
	}

	@Test
	void aLongKeyIsReplacedByAHashInsideTheHashTag() {
		String key = key(policy("orders", Algorithm.FIXED), "x".repeat(10_000));
		assertThat(key).startsWith("ratelimit:{" + StoreKeys.HASHED_PREFIX).endsWith("}:fx:1000").hasSizeLessThan(80);
	}

	@Test
	void longKeysAreReplacedByTheirHash() {
		String longKey = "x".repeat(10_000);
		String tag = RedisKeys.tag("orders", longKey);
		assertThat(tag).startsWith(StoreKeys.HASHED_PREFIX).hasSizeLessThan(60);
		assertThat(RedisKeys.tag("orders", longKey + "y")).isNotEqualTo(tag);
		assertThat(RedisKeys.tag("orders", tag)).isNotEqualTo(tag);
		String multibyte = "é".repeat(200);
		assertThat(RedisKeys.tag("orders", multibyte)).startsWith(StoreKeys.HASHED_PREFIX);
	}

	@Test
	void loneSurrogatesNeverShareACounterWithQuestionMarks() {
		String surrogates = "%".repeat(85) + "\uD800\uD800";
		String marks = "%".repeat(85) + "??";
		assertThat(RedisKeys.tag("orders", surrogates)).isNotEqualTo(RedisKeys.tag("orders", marks));
		assertThat(key(policy("orders", Algorithm.FIXED), surrogates))
			.isNotEqualTo(key(policy("orders", Algorithm.FIXED), marks));
	}

	@Test
	void aShortKeyWithALoneSurrogateIsPercentEncodedAndNeverMeetsAQuestionMark() {
		RateLimitPolicy policy = policy("orders", Algorithm.FIXED);
		String surrogate = key(policy, "a\uD800b");
		assertThat(surrogate).contains("{orders:a%uD800b}");
		assertThat(surrogate).isNotEqualTo(key(policy, "a?b"));
		assertThat(key(policy, "a\uDFFFb")).isNotEqualTo(surrogate).contains("%uDFFF");
		assertThat(key(policy, "a%uD800b")).as("the encoding's own text").isNotEqualTo(surrogate);
	}

	@Test
	void theSlotIsRedisClusterCrc16OfTheTag() {
		// Values from the Redis Cluster specification and CLUSTER KEYSLOT.
		assertThat(RedisKeys.slot(RedisKeys.bytes("123456789"))).isEqualTo(0x31C3 & 16383);
		assertThat(RedisKeys.slot(RedisKeys.bytes("foo"))).isEqualTo(12182);
		assertThat(RedisKeys.slot(RedisKeys.bytes("ratelimit:{foo}:fx:1000"))).isEqualTo(12182);
		assertThat(RedisKeys.slot(RedisKeys.bytes("a{}b{foo}"))).isEqualTo(RedisKeys.slot(RedisKeys.bytes("a{}b{foo}")));
	}

	@Test
	void aPrefixWithBracesIsRejected() {
		org.assertj.core.api.Assertions.assertThatIllegalArgumentException().isThrownBy(() -> new RedisKeys("rl{x}"))
			.withMessage("'keyPrefix' must not contain '{' or '}' but was 'rl{x}'");
	}

	private String key(RateLimitPolicy policy, String key) {
		return new String(this.keys.keys(policy, key)[0], StandardCharsets.UTF_8);
	}

	private static RateLimitPolicy policy(String name, Algorithm algorithm) {
		return RateLimitPolicy.builder(name).algorithm(algorithm).limit(1).window(Duration.ofSeconds(1)).build();
	}

}
