package io.github.ratelimit.annotation;

import java.lang.annotation.Documented;
import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;

/**
 * Container for repeated {@link RateLimited @RateLimited} annotations.
 *
 * @since 0.1.0
 */
@Target({ ElementType.METHOD, ElementType.TYPE, ElementType.ANNOTATION_TYPE })
@Retention(RetentionPolicy.RUNTIME)
@Documented
public @interface RateLimits {

	/**
	 * The policies, checked in this order.
	 * @return the policies
	 */
	RateLimited[] value();

}
