package io.github.ratelimit.integration;

import java.lang.annotation.Documented;
import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;

import io.github.ratelimit.annotation.RateLimited;

import org.springframework.core.annotation.AliasFor;

/**
 * An application's own annotation composed with {@code @RateLimited}, as a user writes one: a fixed window of a
 * minute per user (the handler's {@code userId} argument), the limit and the policy's name passed through.
 */
@Target({ ElementType.METHOD, ElementType.TYPE })
@Retention(RetentionPolicy.RUNTIME)
@Documented
@RateLimited(window = "1m", key = "#userId")
public @interface ApiLimit {

	/** Requests a minute per user. */
	@AliasFor(annotation = RateLimited.class, attribute = "limit")
	long perMinute();

	/** The policy's name. */
	@AliasFor(annotation = RateLimited.class, attribute = "name")
	String name() default "";

}
